-- aggregate: candles_1h
-- candles_1h: hourly OHLCV per pair, a hierarchical continuous aggregate on candles_5m.
-- open/close come from the first/last 5-minute bucket by trade time; pv and volume are summed, so
-- the hourly VWAP is exact (sum pv / sum volume), not an average of 5-minute VWAPs.
-- Read by: GET /v1/rates/historical?interval=1h (the default), premium?interval=1h.
-- Refresh: after candles_5m in the same pass, up to the newest closed hour (no policy).
DROP MATERIALIZED VIEW IF EXISTS candles_1h CASCADE;

CREATE MATERIALIZED VIEW candles_1h
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '1 hour', bucket) AS bucket,
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
GROUP BY time_bucket(INTERVAL '1 hour', bucket), pair
WITH NO DATA;
