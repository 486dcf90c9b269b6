-- Up Migration
-- FX observations: units of fiat per 1 USD (USD/NGN = 1530 means 1 USD buys 1530 NGN).
-- `time` is when we observed it; `source_updated_at` is the source's own update time, which is
-- what freshness is judged by (ExchangeRate-API's open endpoint updates once a day).
CREATE TABLE fx_rates (
  time               timestamptz NOT NULL,
  currency           text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  units_per_usd      numeric     NOT NULL CHECK (units_per_usd > 0),
  source             text        NOT NULL,
  source_updated_at  timestamptz NOT NULL
);
SELECT create_hypertable('fx_rates', by_range('time', INTERVAL '7 days'));
CREATE UNIQUE INDEX fx_rates_identity ON fx_rates (source, currency, source_updated_at, time);
CREATE INDEX fx_rates_currency_time ON fx_rates (currency, time DESC);

-- Down Migration
DROP TABLE fx_rates;
