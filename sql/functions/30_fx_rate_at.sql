-- fx_rate_at(currency, at): units of `currency` per 1 USD in force at `at`.
-- Each source's newest observation at or before `at` counts if the source itself updated it within
-- the last fx_fresh_hours (36: ExchangeRate-API's open endpoint updates daily, 36 h allows for its delay);
-- the rate is the median of those. A fresh observation was also observed within those hours,
-- so only they are read. With no fresh source, the newest observation (within fx_fallback_hours, 30 days) is used
-- and `fresh_sources` is 0 (the API flags that as fx_stale). Spans are in hours: an interval in
-- days follows the session's TimeZone across a DST change (23 or 25 hours).
-- Called by: candles_with_synthetic, synthetic_at, index_acli.
DROP FUNCTION IF EXISTS fx_rate_at(text, timestamptz) CASCADE;

CREATE FUNCTION fx_rate_at(p_currency text, p_at timestamptz,
  OUT units_per_usd numeric, OUT source_updated_at timestamptz, OUT fresh_sources integer)
LANGUAGE sql STABLE AS $$
  WITH latest AS (
    SELECT DISTINCT ON (source) source, units_per_usd, source_updated_at
    FROM fx_rates
    WHERE currency = p_currency AND time <= p_at AND time >= p_at - make_interval(hours => methodology_parameter('fx_fresh_hours')::int)
    ORDER BY source, time DESC
  ),
  fresh AS (
    SELECT units_per_usd, source_updated_at,
           row_number() OVER (ORDER BY units_per_usd) AS n, count(*) OVER () AS total
    FROM latest
    WHERE source_updated_at >= p_at - make_interval(hours => methodology_parameter('fx_fresh_hours')::int)
  )
  SELECT * FROM (
    SELECT avg(units_per_usd), max(source_updated_at), max(total)::integer
    FROM fresh
    -- the middle row, or the two middle rows' mean
    WHERE n IN ((total + 1) / 2, (total + 2) / 2)
    HAVING count(*) > 0
    UNION ALL
    (SELECT units_per_usd, source_updated_at, 0
     FROM fx_rates
     WHERE currency = p_currency AND time <= p_at AND time > p_at - make_interval(hours => methodology_parameter('fx_fallback_hours')::int)
       AND NOT EXISTS (SELECT 1 FROM fresh)
     ORDER BY time DESC
     LIMIT 1)
  ) AS pick
$$;
