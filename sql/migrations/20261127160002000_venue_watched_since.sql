-- Up Migration
-- Per venue and pair: since when the collector running now has asked the venue for it (set at each
-- venue's first run in a process, and when the row is first made). A venue is silent, and failing
-- in GET /v1/status, when it has delivered no trade for 15 minutes of being asked: a restart after
-- downtime, or a pair with no trade yet at start, is not the venue's silence.
ALTER TABLE venue_health ADD COLUMN watched_since timestamptz NOT NULL DEFAULT now();

-- Down Migration
ALTER TABLE venue_health DROP COLUMN watched_since;
