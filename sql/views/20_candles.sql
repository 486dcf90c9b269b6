-- candles: the three candle levels behind one name, told apart by `interval` ('5m', '1h', '1d').
-- The API and the SQL below read this view, never the aggregates directly, so an aggregate can be
-- rebuilt or a level added here without touching a route. A filter on `interval` prunes the other
-- branches. vwap = pv / volume: the one definition of VWAP in afrates.
DROP VIEW IF EXISTS candles CASCADE;

CREATE VIEW candles AS
SELECT '5m'::text AS interval, bucket, pair, open, high, low, close, pv, volume, trades,
       pv / volume AS vwap, first_trade_at, last_trade_at
FROM candles_5m
UNION ALL
SELECT '1h', bucket, pair, open, high, low, close, pv, volume, trades,
       pv / volume, first_trade_at, last_trade_at
FROM candles_1h
UNION ALL
SELECT '1d', bucket, pair, open, high, low, close, pv, volume, trades,
       pv / volume, first_trade_at, last_trade_at
FROM candles_1d;
