-- Up Migration
-- Where collection stands, durably: a restart resumes from here.

-- Per venue and pair: the newest trade stored (time, id), the page cursor to resume from.
CREATE TABLE ingest_watermarks (
  exchange     text        NOT NULL,
  pair         text        NOT NULL REFERENCES pairs (pair),
  last_time    timestamptz NOT NULL,
  last_id      text        NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (exchange, pair)
);

-- Which venue serves which pair, as discovered from loadMarkets (refreshed daily).
CREATE TABLE venue_markets (
  exchange       text        NOT NULL,
  pair           text        NOT NULL REFERENCES pairs (pair),
  symbol         text        NOT NULL,      -- the venue's own market symbol
  discovered_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (exchange, pair)
);

-- The latest fetch outcome per venue and pair: feeds sources_failing in GET /v1/status.
CREATE TABLE venue_health (
  exchange          text        NOT NULL,
  pair              text        NOT NULL REFERENCES pairs (pair),
  last_attempt_at   timestamptz NOT NULL,
  last_success_at   timestamptz,
  last_trade_at     timestamptz,
  consecutive_failures integer  NOT NULL DEFAULT 0,
  last_error        text,
  PRIMARY KEY (exchange, pair)
);

-- One row per collection cycle (trades or fx): health and status report collector state from it.
CREATE TABLE ingest_cycles (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind         text        NOT NULL CHECK (kind IN ('trades', 'fx', 'backfill')),
  market       text        NOT NULL CHECK (market IN ('real', 'simulated')),
  started_at   timestamptz NOT NULL,
  finished_at  timestamptz NOT NULL,
  rows_by_source jsonb     NOT NULL DEFAULT '{}',
  errors       jsonb       NOT NULL DEFAULT '[]'
);
CREATE INDEX ingest_cycles_kind_finished ON ingest_cycles (kind, finished_at DESC);

-- Down Migration
DROP TABLE ingest_cycles;
DROP TABLE venue_health;
DROP TABLE venue_markets;
DROP TABLE ingest_watermarks;
