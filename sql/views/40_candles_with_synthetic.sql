-- candles_with_synthetic(interval, pair, from, to, limit): a public pair's candles in [from, to),
-- oldest first, at most `limit` (NULL: all), each beside its synthetic cross-rate.
-- synthetic_price = VWAP(BASE/USDT, same interval and bucket) x USD/QUOTE in force at the start of
-- the bucket's hour (fx_rate_at). FX is an hourly series (collected hourly), so a 5-minute candle
-- takes the hour's rate; this also means one FX lookup per hour of candles, not one per candle.
-- USDT and USDC count as 1 USD, so for them it is the FX rate alone.
-- premium = vwap - synthetic_price; premium_pct = premium / synthetic_price x 100.
-- A function rather than a view so the range and limit apply before the FX lookups.
-- Read by: GET /v1/rates/historical (verification), premium_series, certificates.
DROP VIEW IF EXISTS candles_with_synthetic CASCADE;
DROP FUNCTION IF EXISTS candles_with_synthetic(text, text, timestamptz, timestamptz, integer) CASCADE;

CREATE FUNCTION candles_with_synthetic(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer DEFAULT NULL)
RETURNS TABLE ("interval" text, bucket timestamptz, pair text, base text, quote text,
               open numeric, high numeric, low numeric, close numeric, volume numeric, trades numeric,
               vwap numeric, first_trade_at timestamptz, last_trade_at timestamptz,
               usd_price numeric, units_per_usd numeric, fx_fresh_sources integer,
               synthetic_price numeric, premium numeric, premium_pct numeric)
LANGUAGE sql STABLE AS $$
  WITH p AS (
    SELECT base, quote FROM pairs WHERE pairs.pair = p_pair AND visibility = 'public'
  ),
  c AS (
    SELECT * FROM candles
    WHERE candles.interval = p_interval AND candles.pair = p_pair AND candles.bucket >= p_from AND candles.bucket < p_to
    ORDER BY candles.bucket
    LIMIT p_limit
  ),
  usdt AS (
    SELECT u.bucket, u.vwap FROM candles u, p
    WHERE u.interval = p_interval AND u.pair = p.base || 'USDT'
      AND u.bucket >= (SELECT min(c.bucket) FROM c) AND u.bucket <= (SELECT max(c.bucket) FROM c)
  ),
  fx AS (
    SELECT h.hour, f.units_per_usd, f.fresh_sources
    FROM (SELECT DISTINCT date_trunc('hour', c.bucket) AS hour FROM c) h, p,
         LATERAL fx_rate_at(p.quote, h.hour) f
  ),
  priced AS (
    SELECT c.*, p.base, p.quote,
           CASE WHEN p.base IN ('USDT', 'USDC') THEN 1::numeric ELSE usdt.vwap END AS usd_price,
           fx.units_per_usd, fx.fresh_sources
    FROM c CROSS JOIN p
    LEFT JOIN usdt ON usdt.bucket = c.bucket
    LEFT JOIN fx ON fx.hour = date_trunc('hour', c.bucket)
  )
  SELECT r.interval, r.bucket, r.pair, r.base, r.quote, r.open, r.high, r.low, r.close, r.volume,
         r.trades, r.vwap, r.first_trade_at, r.last_trade_at, r.usd_price, r.units_per_usd, r.fresh_sources,
         r.usd_price * r.units_per_usd,
         r.vwap - r.usd_price * r.units_per_usd,
         (r.vwap - r.usd_price * r.units_per_usd) / (r.usd_price * r.units_per_usd) * 100
  FROM priced r
  ORDER BY r.bucket
$$;
