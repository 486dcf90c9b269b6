-- aggregate: candles_5m_by_exchange
-- candles_5m_by_exchange: 5-minute OHLCV per pair and venue.
-- Source: trades. Bucket: 5 minutes by the venue's trade time.
-- Read by: live rates (each venue's newest candle is one source of the VWAP), spread
-- (per-venue low/high), historical verification (sources_count, dispersion), status.
-- pv = sum(price x amount) and volume = sum(amount) are carried so VWAP = pv / volume stays exact
-- when buckets are combined; never average VWAPs.
-- Refresh: by the pipeline only (lib/db/refresh.ts), from its durable frontier up to the newest
-- closed bucket after every cycle, and again wherever late trades land; no TimescaleDB policy.
DROP MATERIALIZED VIEW IF EXISTS candles_5m_by_exchange CASCADE;

CREATE MATERIALIZED VIEW candles_5m_by_exchange
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '5 minutes', time) AS bucket,
       pair,
       exchange,
       first(price, time)   AS open,
       max(price)           AS high,
       min(price)           AS low,
       last(price, time)    AS close,
       sum(price * amount)  AS pv,
       sum(amount)          AS volume,
       count(*)             AS trades,
       max(time)            AS last_trade_at
FROM trades
GROUP BY time_bucket(INTERVAL '5 minutes', time), pair, exchange
WITH NO DATA;
