-- synthetic_at(at): the synthetic cross-rate of every public pair at `at`:
-- VWAP of BASE/USDT's newest 5-minute candle at or before `at` (within synthetic_lookback_hours) x USD/QUOTE in
-- force at `at`. USDT and USDC count as 1 USD.
-- Read by: the live snapshot (api/live), spread, indices.
DROP FUNCTION IF EXISTS synthetic_at(timestamptz) CASCADE;

CREATE FUNCTION synthetic_at(p_at timestamptz)
RETURNS TABLE (pair text, usd_price numeric, usd_price_at timestamptz, units_per_usd numeric,
               fx_updated_at timestamptz, fx_fresh_sources integer, price numeric)
LANGUAGE sql STABLE AS $$
  SELECT p.pair, u.usd_price, u.at, fx.units_per_usd, fx.source_updated_at, fx.fresh_sources,
         u.usd_price * fx.units_per_usd
  FROM public_pairs p
  CROSS JOIN LATERAL fx_rate_at(p.quote, p_at) AS fx
  LEFT JOIN LATERAL (
    SELECT 1::numeric AS usd_price, p_at AS at WHERE p.base IN ('USDT', 'USDC')
    UNION ALL
    (SELECT c.vwap, c.last_trade_at FROM candles c
     WHERE p.base NOT IN ('USDT', 'USDC') AND c.interval = '5m' AND c.pair = p.base || 'USDT'
       AND c.bucket <= p_at AND c.bucket > p_at - make_interval(hours => methodology_parameter('synthetic_lookback_hours')::int)
     ORDER BY c.bucket DESC LIMIT 1)
  ) AS u ON true
$$;
