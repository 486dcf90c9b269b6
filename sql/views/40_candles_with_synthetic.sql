-- Candles beside their synthetic cross-rate, in two shapes over one definition:
--   candles_with_synthetic(interval, pair, from, to, limit): every column (premium, certificates);
--   candle_page(interval, pair, from, to, limit): one page of GET /v1/rates/historical, wire-ready.
-- Both read a public pair's candles in [from, to), oldest first, at most `limit` (NULL: all).
-- synthetic_price = VWAP(BASE/USDT, same interval and bucket) x USD/QUOTE in force at the start of
-- the bucket's hour (fx_rate_at, read from its hourly materialisation fx_in_force; an hour not in it
-- yet is looked up directly). FX is an hourly series (collected hourly), so a 5-minute candle takes
-- the hour's rate. USDT and USDC count as 1 USD, so for them it is the FX rate alone.
-- premium = vwap - synthetic_price; premium_pct = premium / synthetic_price x 100.
--
-- The rule is written once, in synthetic_candles_sql(): the WITH clauses both functions run. They
-- run it through PL/pgSQL's EXECUTE ... USING, planned afresh on every call for the values given:
-- never a generic plan (whose guessed row counts turned the FX join into 8 million comparisons,
-- 1.3 s), and planned as a query that names the aggregates, so TimescaleDB replaces their watermark
-- function with a constant (inlined into a caller's query it stayed a call per row: 80 ms for
-- 10,000 rows). Every join here is between lists of buckets of like size, so hash and merge joins are
-- always right: nested loops are switched off, because without table statistics (the embedded
-- database has no autovacuum to gather them) the planner guessed 7 rows and joined 10,000 x 10,000
-- (35 s). Read by: GET /v1/rates/historical (candle_page), premium_series, certificates.
DROP VIEW IF EXISTS candles_with_synthetic CASCADE;
DROP FUNCTION IF EXISTS candles_with_synthetic(text, text, timestamptz, timestamptz, integer) CASCADE;
DROP FUNCTION IF EXISTS candle_page(text, text, timestamptz, timestamptz, integer) CASCADE;
DROP FUNCTION IF EXISTS synthetic_candles_sql() CASCADE;

-- The WITH clauses: c (the candles), usdt (the USDT leg's VWAP per bucket), fx (per hour), and
-- priced (each candle with usd_price and units_per_usd). Parameters: $1 interval, $2 pair,
-- $3 from, $4 to, $5 limit, $6 the USDT leg (NULL when the base is a USD coin), $7 base, $8 quote.
CREATE FUNCTION synthetic_candles_sql() RETURNS text LANGUAGE sql IMMUTABLE AS $body$
  SELECT $q$
  WITH c AS (
    SELECT candles.interval, candles.bucket, candles.pair, candles.open, candles.high, candles.low,
           candles.close, candles.volume, candles.trades, candles.vwap, candles.first_trade_at, candles.last_trade_at
    FROM candles
    WHERE candles.interval = $1 AND candles.pair = $2 AND candles.bucket >= $3 AND candles.bucket < $4
    ORDER BY candles.bucket
    LIMIT $5
  ),
  usdt AS (
    SELECT u.bucket, u.vwap FROM candles u
    WHERE u.interval = $1 AND u.pair = $6 AND u.bucket >= $3 AND u.bucket < $4
      AND u.bucket <= (SELECT max(c.bucket) FROM c)
  ),
  fx AS (
    SELECT h.hour, coalesce(m.units_per_usd, d.units_per_usd) AS units_per_usd,
           coalesce(m.fresh_sources, d.fresh_sources) AS fresh_sources
    FROM (SELECT DISTINCT date_trunc('hour', c.bucket) AS hour FROM c) h
    LEFT JOIN fx_in_force m ON m.currency = $8 AND m.hour = h.hour
    -- OFFSET 0 keeps the condition in front of the call: the lookup runs only for a missing hour
    LEFT JOIN LATERAL (SELECT * FROM fx_rate_at($8, h.hour) WHERE m.hour IS NULL OFFSET 0) d ON true
  ),
  priced AS (
    SELECT c.*, CASE WHEN $6 IS NULL THEN 1::numeric ELSE usdt.vwap END AS usd_price,
           fx.units_per_usd, fx.fresh_sources
    FROM c
    LEFT JOIN usdt ON usdt.bucket = c.bucket
    LEFT JOIN fx ON fx.hour = date_trunc('hour', c.bucket)
  )
  $q$
$body$;

CREATE FUNCTION candles_with_synthetic(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer DEFAULT NULL)
RETURNS TABLE ("interval" text, bucket timestamptz, pair text, base text, quote text,
               open numeric, high numeric, low numeric, close numeric, volume numeric, trades numeric,
               vwap numeric, first_trade_at timestamptz, last_trade_at timestamptz,
               usd_price numeric, units_per_usd numeric, fx_fresh_sources integer,
               synthetic_price numeric, premium numeric, premium_pct numeric)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
AS $fn$
DECLARE
  v_base text;
  v_quote text;
BEGIN
  SELECT p.base, p.quote INTO v_base, v_quote FROM pairs p WHERE p.pair = p_pair AND p.visibility = 'public';
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE synthetic_candles_sql() || $q$
  SELECT r.interval, r.bucket, r.pair, $7, $8, r.open, r.high, r.low, r.close, r.volume,
         r.trades, r.vwap, r.first_trade_at, r.last_trade_at, r.usd_price, r.units_per_usd, r.fresh_sources,
         r.usd_price * r.units_per_usd,
         r.vwap - r.usd_price * r.units_per_usd,
         (r.vwap - r.usd_price * r.units_per_usd) / (r.usd_price * r.units_per_usd) * 100
  FROM priced r
  ORDER BY r.bucket
  $q$ USING p_interval, p_pair, p_from, p_to, p_limit,
            CASE WHEN v_base IN ('USDT', 'USDC') THEN NULL ELSE v_base || 'USDT' END, v_base, v_quote;
END $fn$;

-- candle_page: the same candles, shaped for the wire, beside how their venues' VWAPs in the bucket
-- spread (how many, lowest, highest, mean: the inputs of the verification rules in
-- api/verification.ts). The timestamp comes already written as the contract writes it (buckets
-- start on whole minutes: no fraction) and the numbers as float8 (about 15 significant digits; the
-- API shows 12), so 10,000 rows cost the API no parsing beyond numbers.
CREATE FUNCTION candle_page(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer)
RETURNS TABLE (t text, open float8, high float8, low float8, close float8, vwap float8, volume float8,
               synthetic float8, venues integer, venue_min float8, venue_max float8, venue_mean float8)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
AS $fn$
DECLARE
  v_base text;
  v_quote text;
  -- how the page's venues spread per bucket: read from venue_spread_5m for 5m; for 1h and 1d each
  -- venue's VWAP over the bucket is combined from its 5-minute rows (sum pv / sum volume) first
  v_spread text := CASE p_interval
    WHEN '5m' THEN $v$
      SELECT v.bucket, v.venues::integer AS n, v.lowest::float8 AS lo, v.highest::float8 AS hi, v.mean::float8 AS mean
      FROM venue_spread_5m v
      WHERE v.pair = $2 AND v.bucket >= $3 AND v.bucket < $4 AND v.bucket <= (SELECT max(c.bucket) FROM c)$v$
    ELSE $v$
      SELECT bucket, count(*)::integer AS n, min(vwap) AS lo, max(vwap) AS hi, avg(vwap) AS mean
      FROM (SELECT time_bucket($9, e.bucket) AS bucket, (sum(e.pv) / sum(e.volume))::float8 AS vwap
            FROM candles_5m_by_exchange e
            WHERE e.pair = $2 AND e.bucket >= $3 AND e.bucket < $4 AND e.bucket < (SELECT max(c.bucket) FROM c) + $9
            GROUP BY 1, e.exchange) per_venue
      GROUP BY bucket$v$
    END;
BEGIN
  SELECT p.base, p.quote INTO v_base, v_quote FROM pairs p WHERE p.pair = p_pair AND p.visibility = 'public';
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE synthetic_candles_sql() || ', spread AS (' || v_spread || $q$)
  SELECT to_char(r.bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
         r.open::float8, r.high::float8, r.low::float8, r.close::float8, r.vwap::float8, r.volume::float8,
         (r.usd_price * r.units_per_usd)::float8, coalesce(s.n, 0), s.lo, s.hi, s.mean
  FROM priced r LEFT JOIN spread s ON s.bucket = r.bucket
  ORDER BY r.bucket
  $q$ USING p_interval, p_pair, p_from, p_to, p_limit,
            CASE WHEN v_base IN ('USDT', 'USDC') THEN NULL ELSE v_base || 'USDT' END, v_base, v_quote,
            CASE p_interval WHEN '1h' THEN INTERVAL '1 hour' ELSE INTERVAL '1 day' END;
END $fn$;
