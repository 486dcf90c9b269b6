-- candles_with_synthetic: every candle of a public pair beside its synthetic cross-rate.
-- synthetic_price = VWAP(BASE/USDT, same interval and bucket) x USD/QUOTE in force at the bucket's
-- start (fx_rate_at). USDT and USDC count as 1 USD, so for them it is the FX rate alone.
-- premium = vwap - synthetic_price; premium_pct = premium / synthetic_price x 100.
-- sources_count = venues that traded the pair in the bucket.
-- Read by: GET /v1/rates/historical (verification), premium_series, certificates, eod.
DROP VIEW IF EXISTS candles_with_synthetic CASCADE;

CREATE VIEW candles_with_synthetic AS
SELECT c.interval, c.bucket, c.pair, p.base, p.quote,
       c.open, c.high, c.low, c.close, c.volume, c.trades, c.vwap,
       c.first_trade_at, c.last_trade_at,
       s.usd_price, fx.units_per_usd, fx.fresh_sources AS fx_fresh_sources,
       s.usd_price * fx.units_per_usd AS synthetic_price,
       c.vwap - s.usd_price * fx.units_per_usd AS premium,
       (c.vwap - s.usd_price * fx.units_per_usd) / (s.usd_price * fx.units_per_usd) * 100 AS premium_pct
FROM candles c
JOIN pairs p ON p.pair = c.pair AND p.visibility = 'public'
CROSS JOIN LATERAL fx_rate_at(p.quote, c.bucket) AS fx
LEFT JOIN LATERAL (
  SELECT 1::numeric AS usd_price WHERE p.base IN ('USDT', 'USDC')
  UNION ALL
  SELECT u.vwap FROM candles u
  WHERE p.base NOT IN ('USDT', 'USDC')
    AND u.interval = c.interval AND u.pair = p.base || 'USDT' AND u.bucket = c.bucket
) AS s ON true;
