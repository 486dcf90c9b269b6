-- Up Migration
-- The FX rate in force at the start of every hour, per currency: fx_rate_at() materialised, so a
-- page of 10,000 candles (one FX lookup per hour of them) reads rows instead of running the
-- median-of-fresh-sources lookup 840 times. Filled and corrected by fx_in_force_refresh()
-- (sql/functions/35_fx_in_force.sql), which the writer of FX rates and the pipeline call; readers
-- fall back to fx_rate_at() for an hour not filled yet.
CREATE TABLE fx_in_force (
  currency           text        NOT NULL,
  hour               timestamptz NOT NULL CHECK (date_trunc('hour', hour) = hour),
  units_per_usd      numeric     NOT NULL,
  source_updated_at  timestamptz NOT NULL,
  fresh_sources      integer     NOT NULL,
  PRIMARY KEY (currency, hour)
);

-- Down Migration
DROP TABLE fx_in_force;
