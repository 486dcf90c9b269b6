-- Up Migration
-- The refresh frontier of each continuous aggregate, kept in the database so that no closed bucket
-- is ever skipped, whatever a cycle brought and across restarts (lib/db/refresh.ts):
-- every bucket of `view_name` that ends at or before `refreshed_to` has been materialised.
-- Each cycle refreshes from the frontier up to the newest closed bucket and moves it there.
CREATE TABLE aggregate_frontier (
  view_name     text        PRIMARY KEY,
  refreshed_to  timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Trades stored where an aggregate may already be materialised (late trades, backfills): the
-- writer (pipeline/store.ts) records the earliest trade time of every insert here *before* the
-- insert, so even a crash between the two leaves the range to refresh on record. The next refresh
-- starts each aggregate at the earliest request (or its frontier, whichever is older) and deletes
-- the requests it has covered.
CREATE TABLE refresh_requests (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  from_time     timestamptz NOT NULL,
  requested_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE refresh_requests;
DROP TABLE aggregate_frontier;
