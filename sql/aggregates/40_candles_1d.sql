-- aggregate: candles_1d
-- candles_1d: daily OHLCV per pair (UTC days), hierarchical on candles_1h.
-- Read by: GET /v1/rates/historical?interval=1d, GET /v1/rates/eod, premium?interval=1d.
-- Refresh: after candles_1h in the same pass, up to the newest closed day (no policy).
DROP MATERIALIZED VIEW IF EXISTS candles_1d CASCADE;

CREATE MATERIALIZED VIEW candles_1d
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '1 day', bucket) AS bucket,
       pair,
       first(open, first_trade_at) AS open,
       max(high)                   AS high,
       min(low)                    AS low,
       last(close, last_trade_at)  AS close,
       sum(pv)                     AS pv,
       sum(volume)                 AS volume,
       sum(trades)                 AS trades,
       min(first_trade_at)         AS first_trade_at,
       max(last_trade_at)          AS last_trade_at
FROM candles_1h
GROUP BY time_bucket(INTERVAL '1 day', bucket), pair
WITH NO DATA;
