-- aggregate: candles_15m
-- candles_15m: 15-minute OHLCV per pair, a hierarchical continuous aggregate on candles_5m (the
-- interval 15m of lib/intervals.ts). open/close come from the first/last 5-minute bucket by trade
-- time; pv and volume are summed, so the VWAP is exact (sum pv / sum volume), never an average.
-- Read by: GET /v1/rates/historical?interval=15m, premium?interval=15m, exports, restatements.
-- Refresh: after candles_5m in the same pass, up to the newest closed quarter hour (no policy).
DROP MATERIALIZED VIEW IF EXISTS candles_15m CASCADE;

CREATE MATERIALIZED VIEW candles_15m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '15 minutes', bucket) AS bucket,
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
FROM candles_5m
GROUP BY time_bucket(INTERVAL '15 minutes', bucket), pair
WITH NO DATA;
