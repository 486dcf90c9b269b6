-- Up Migration
-- Daily fixings (pipeline/fixings.ts): per pair, one at 16:00 in its quote currency's home zone and
-- one at 00:00 UTC, each the certified rate of the hour before, computed once when that hour has
-- settled and never changed (a material change afterwards is a restatement). `body` is the fixing
-- as published, its certificate included; its bundle is in `bundles` under the same id.
CREATE TABLE fixings (
  id            text        PRIMARY KEY,                 -- FIX-<pair>-<YYYYMMDDTHHMMSSZ>
  pair          text        NOT NULL REFERENCES pairs (pair),
  kind          text        NOT NULL CHECK (kind IN ('local', 'utc')),
  date          date        NOT NULL,                    -- the day in the fixing's zone
  time          timestamptz NOT NULL,                    -- the fixing instant (the window's end)
  rate          numeric     CHECK (rate > 0),            -- NULL: no trade in the window
  body          text        NOT NULL,
  published_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (pair, kind, date)
);
CREATE INDEX fixings_date ON fixings (date, pair);
CREATE TRIGGER fixings_append_only BEFORE UPDATE OR DELETE ON fixings FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER fixings_no_truncate BEFORE TRUNCATE ON fixings FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- What each settled value was when it settled (pipeline/restate.ts): a candle's VWAP at 5m, 1h and
-- 1d (the 1d candle is the end-of-day snapshot), written when its window settles. Restatements
-- compare the candle as it stands with the value published (this, or the last restatement). Kept
-- beyond the restatement window only as long as the publisher's pruning allows.
CREATE TABLE settled_values (
  pair        text        NOT NULL REFERENCES pairs (pair),
  interval    text        NOT NULL CHECK (interval IN ('5m', '1h', '1d')),
  bucket      timestamptz NOT NULL,
  pv          numeric     NOT NULL,
  volume      numeric     NOT NULL CHECK (volume > 0),
  trades      integer     NOT NULL,
  settled_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pair, interval, bucket)
);

-- Restatements: a settled value that trades arriving after settlement moved by more than the
-- methodology's threshold, within its restatement window. The original value is kept (beside the
-- value published before this one and the new one); nothing published is changed.
CREATE TABLE restatements (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  pair         text        NOT NULL REFERENCES pairs (pair),
  subject      text        NOT NULL CHECK (subject IN ('candle_5m', 'candle_1h', 'candle_1d', 'fixing')),
  time         timestamptz NOT NULL,          -- the candle's start, or the fixing's time
  ref          text,                          -- the fixing's id
  original     numeric     NOT NULL,
  previous     numeric     NOT NULL,          -- the value published until now
  restated     numeric     NOT NULL,
  change_pct   numeric     NOT NULL,          -- (restated - previous) / previous x 100
  reason       jsonb       NOT NULL,          -- {late_trades: [{exchange, trades}], ...}
  restated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX restatements_pair_time ON restatements (pair, restated_at);
CREATE INDEX restatements_subject ON restatements (pair, subject, time);
CREATE TRIGGER restatements_append_only BEFORE UPDATE OR DELETE ON restatements FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER restatements_no_truncate BEFORE TRUNCATE ON restatements FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Down Migration
DROP TABLE restatements;
DROP TABLE settled_values;
DROP TABLE fixings;
