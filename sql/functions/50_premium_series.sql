-- premium_series(pair, interval, from, to): the exchange VWAP's premium over the synthetic
-- cross-rate, grouped into `interval` buckets from the candles that interval is built from
-- (candle_observations: 5-minute candles for hourly buckets, hourly ones for daily buckets;
-- each observation's VWAP and synthetic price are exact at its own level: sum(pv) / sum(volume),
-- never an average). So a wide range reads the hourly aggregate, and the cost is bounded by the
-- route's range limits.
-- avg/max/min are over the observations' premium_pct in the bucket; data_points counts them.
-- Read by: GET /v1/premium (data[]; meta is the same aggregation over the whole range).
DROP FUNCTION IF EXISTS premium_series(text, text, timestamptz, timestamptz);

CREATE FUNCTION premium_series(p_pair text, p_interval text, p_from timestamptz, p_to timestamptz)
RETURNS TABLE (bucket timestamptz, avg_premium_pct numeric, max_premium_pct numeric,
               min_premium_pct numeric, avg_vwap numeric, avg_synthetic numeric, data_points bigint)
LANGUAGE sql STABLE AS $$
  SELECT time_bucket(candle_width(p_interval), o.bucket) AS b,
         avg(o.premium_pct), max(o.premium_pct), min(o.premium_pct),
         avg(o.vwap), avg(o.synthetic_price), count(*)
  FROM candles_with_synthetic(candle_observations(p_interval), p_pair, p_from, p_to) o
  WHERE o.synthetic_price IS NOT NULL
  GROUP BY b
  ORDER BY b
$$;
