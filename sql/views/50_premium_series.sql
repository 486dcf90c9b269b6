-- premium_series(pair, interval, from, to): the exchange VWAP's premium over the synthetic
-- cross-rate, from 5-minute observations grouped into `interval` buckets ('5m', '1h', '1d').
-- avg/max/min are over the 5-minute premium_pct values in the bucket; data_points counts them.
-- Read by: GET /v1/premium (data[]; meta is the same aggregation over the whole range).
DROP FUNCTION IF EXISTS premium_series(text, text, timestamptz, timestamptz);

CREATE FUNCTION premium_series(p_pair text, p_interval text, p_from timestamptz, p_to timestamptz)
RETURNS TABLE (bucket timestamptz, avg_premium_pct numeric, max_premium_pct numeric,
               min_premium_pct numeric, avg_vwap numeric, avg_synthetic numeric, data_points bigint)
LANGUAGE sql STABLE AS $$
  SELECT time_bucket(CASE p_interval WHEN '5m' THEN INTERVAL '5 minutes'
                                     WHEN '1h' THEN INTERVAL '1 hour'
                                     ELSE INTERVAL '1 day' END, bucket) AS b,
         avg(premium_pct), max(premium_pct), min(premium_pct),
         avg(vwap), avg(synthetic_price), count(*)
  FROM candles_with_synthetic('5m', p_pair, p_from, p_to)
  WHERE synthetic_price IS NOT NULL
  GROUP BY b
  ORDER BY b
$$;
