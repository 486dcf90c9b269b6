-- Up Migration
-- Settlement: when a 5-minute bucket's data is final enough to certify (pipeline/settle.ts).

-- Per venue and pair: every trade up to this time has been collected (the start of the fetch that
-- found the venue caught up, less a grace for publishing delays). A quiet venue moves it too, which
-- its watermark (newest trade) would not.
ALTER TABLE venue_health ADD COLUMN collected_through timestamptz;

-- Per public pair: every 5-minute bucket that ends at or before `settled_through` is settled. It
-- only moves forward. Buckets become settled when every venue serving the pair (and its USDT leg,
-- which the synthetic check uses) has collected past their end, or SETTLE_AFTER_SECONDS after they
-- end, whichever comes first.
CREATE TABLE pair_settlement (
  pair             text        PRIMARY KEY REFERENCES pairs (pair),
  settled_through  timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- Trades that arrived after their bucket was settled: they correct the candle, never an issued
-- certificate. One row per collected batch that held any; GET /v1/status reports the last 24 h.
CREATE TABLE late_trades (
  noticed_at  timestamptz NOT NULL DEFAULT now(),
  exchange    text        NOT NULL,
  pair        text        NOT NULL REFERENCES pairs (pair),
  trades      integer     NOT NULL CHECK (trades > 0),
  oldest      timestamptz NOT NULL  -- the earliest trade time among them
);
CREATE INDEX late_trades_noticed ON late_trades (noticed_at DESC);

-- Certificates, issued once per settled 5-minute bucket that has exchange trades, and never
-- changed: `body` is the certificate as issued (everything but the requesting customer's section),
-- so the same certificate is the same bytes forever. The trigger below refuses updates and deletes.
CREATE TABLE certificates (
  pair        text        NOT NULL REFERENCES pairs (pair),
  bucket      timestamptz NOT NULL,
  rate        numeric     NOT NULL CHECK (rate > 0),
  body        text        NOT NULL,
  issued_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (pair, bucket)
);

CREATE FUNCTION certificates_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'certificates are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER certificates_append_only BEFORE UPDATE OR DELETE ON certificates
  FOR EACH ROW EXECUTE FUNCTION certificates_are_append_only();
CREATE TRIGGER certificates_no_truncate BEFORE TRUNCATE ON certificates
  FOR EACH STATEMENT EXECUTE FUNCTION certificates_are_append_only();

-- Down Migration
DROP TABLE certificates;
DROP FUNCTION certificates_are_append_only();
DROP TABLE late_trades;
DROP TABLE pair_settlement;
ALTER TABLE venue_health DROP COLUMN collected_through;
