-- aggregate: candles_5m
-- candles_5m: 5-minute OHLCV per pair across all venues; the base of the wider intervals' hierarchy.
-- Source: trades (not candles_5m_by_exchange: open/close across venues need the trade times).
-- Bucket: 5 minutes. Read by: GET /v1/rates/historical?interval=5m, synthetic prices (the
-- *USDT pairs), premium, certificates, indices.
-- Refresh: as candles_5m_by_exchange (pipeline only, from its frontier; no policy).
DROP MATERIALIZED VIEW IF EXISTS candles_5m CASCADE;

CREATE MATERIALIZED VIEW candles_5m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '5 minutes', time) AS bucket,
       pair,
       first(price, time)   AS open,
       max(price)           AS high,
       min(price)           AS low,
       last(price, time)    AS close,
       sum(price * amount)  AS pv,
       sum(amount)          AS volume,
       count(*)             AS trades,
       min(time)            AS first_trade_at,
       max(time)            AS last_trade_at
FROM trades
GROUP BY time_bucket(INTERVAL '5 minutes', time), pair
WITH NO DATA;
