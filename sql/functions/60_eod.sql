-- eod(pair, date): the end-of-day snapshot of one UTC day (00:00 to 24:00), from candles_1d.
-- pv and volume are the day's exact sums: the route computes the published VWAP from them.
-- Read by: GET /v1/rates/eod. No row when nothing traded that day (the route answers 404).
DROP FUNCTION IF EXISTS eod(text, date);

CREATE FUNCTION eod(p_pair text, p_date date)
RETURNS TABLE (date date, pair text, open numeric, high numeric, low numeric, close numeric,
               vwap numeric, total_volume numeric, pv numeric)
LANGUAGE sql STABLE AS $$
  SELECT (bucket AT TIME ZONE 'UTC')::date, pair, open, high, low, close, vwap, volume, pv
  FROM candles
  WHERE interval = '1d' AND pair = p_pair
    AND bucket = (p_date::timestamp AT TIME ZONE 'UTC')
$$;
