-- Up Migration
-- Reference data: the pairs afrates publishes (public) and the USDT pairs the synthetic
-- cross-rate is built from (internal, never shown to customers).
CREATE EXTENSION IF NOT EXISTS timescaledb;

CREATE TABLE pairs (
  pair        text PRIMARY KEY CHECK (pair ~ '^[A-Z]{6,8}$'),
  base        text NOT NULL,
  quote       text NOT NULL,
  visibility  text NOT NULL CHECK (visibility IN ('public', 'internal')),
  CHECK (pair = base || quote)
);

INSERT INTO pairs (pair, base, quote, visibility) VALUES
  ('BTCNGN', 'BTC', 'NGN', 'public'), ('ETHNGN', 'ETH', 'NGN', 'public'),
  ('USDTNGN', 'USDT', 'NGN', 'public'), ('XRPNGN', 'XRP', 'NGN', 'public'),
  ('SOLNGN', 'SOL', 'NGN', 'public'), ('USDCNGN', 'USDC', 'NGN', 'public'),
  ('BTCZAR', 'BTC', 'ZAR', 'public'), ('ETHZAR', 'ETH', 'ZAR', 'public'),
  ('XRPZAR', 'XRP', 'ZAR', 'public'), ('SOLZAR', 'SOL', 'ZAR', 'public'),
  ('USDTZAR', 'USDT', 'ZAR', 'public'),
  ('BTCKES', 'BTC', 'KES', 'public'), ('ETHKES', 'ETH', 'KES', 'public'),
  ('XRPKES', 'XRP', 'KES', 'public'), ('USDTKES', 'USDT', 'KES', 'public'),
  ('USDCKES', 'USDC', 'KES', 'public'),
  ('BTCGHS', 'BTC', 'GHS', 'public'), ('USDTGHS', 'USDT', 'GHS', 'public'),
  ('BTCUGX', 'BTC', 'UGX', 'public'), ('USDTUGX', 'USDT', 'UGX', 'public'),
  ('BTCUSDT', 'BTC', 'USDT', 'internal'), ('ETHUSDT', 'ETH', 'USDT', 'internal'),
  ('XRPUSDT', 'XRP', 'USDT', 'internal'), ('SOLUSDT', 'SOL', 'USDT', 'internal');

-- Repeatable SQL objects (sql/aggregates, sql/views) and the checksum they were applied with;
-- lib/db/migrate.ts re-applies a file, and every file after it, when its checksum changes.
CREATE TABLE sql_objects (
  file        text PRIMARY KEY,
  checksum    text NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE sql_objects;
DROP TABLE pairs;
