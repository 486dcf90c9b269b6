-- candles: the three candle levels behind one name, told apart by `interval` ('5m', '1h', '1d'),
-- from candles_5m, candles_1h and candles_1d; a filter on `interval` prunes the other branches.
-- The API and the SQL below read this view or, where a level is read in bulk (the page queries),
-- the aggregate candle_aggregate() names: a level is added here, in both, without touching a route.
-- vwap(pv, volume) = pv / volume: the one definition of VWAP in afrates (an SQL function the
-- planner inlines). candle_aggregate(interval) names the aggregate behind each level, for the page
-- queries (sql/functions/40_candles_with_synthetic.sql), which read one level directly: through
-- this view every row is projected twice (docs/decisions.md, "Page queries read one level's aggregate").
DROP VIEW IF EXISTS candles CASCADE;
DROP FUNCTION IF EXISTS vwap(numeric, numeric) CASCADE;
DROP FUNCTION IF EXISTS candle_aggregate(text) CASCADE;

CREATE FUNCTION vwap(pv numeric, volume numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT pv / volume $$;

-- NULL for anything but '5m', '1h' or '1d' (format('%I', NULL) then refuses it)
CREATE FUNCTION candle_aggregate(p_interval text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_interval WHEN '5m' THEN 'candles_5m' WHEN '1h' THEN 'candles_1h' WHEN '1d' THEN 'candles_1d' END
$$;

CREATE VIEW candles AS
SELECT '5m'::text AS interval, bucket, pair, open, high, low, close, pv, volume, trades,
       vwap(pv, volume) AS vwap, first_trade_at, last_trade_at
FROM candles_5m
UNION ALL
SELECT '1h', bucket, pair, open, high, low, close, pv, volume, trades,
       vwap(pv, volume), first_trade_at, last_trade_at
FROM candles_1h
UNION ALL
SELECT '1d', bucket, pair, open, high, low, close, pv, volume, trades,
       vwap(pv, volume), first_trade_at, last_trade_at
FROM candles_1d;
