-- Candles beside their synthetic cross-rate, in two shapes over one definition:
--   candles_with_synthetic(interval, pair, from, to, limit): every column (premium, certificates);
--   candle_page(interval, pair, from, to, limit): one page of GET /v1/rates/historical, wire-ready.
-- Both read a public pair's candles in [from, to), oldest first, at most `limit` (NULL: all), from
-- the level's aggregate (candle_aggregate), the USDT leg's candles and fx_in_force; candle_page
-- adds the venues' spread (venue_spread_5m, or candles_5m_by_exchange) and pair_settlement.
-- synthetic_price = VWAP(BASE/USDT, same interval and bucket) x USD/QUOTE in force at the start of
-- the bucket's UTC hour (fx_in_force; an hour not in it yet is looked up with fx_rate_at). USDT and
-- USDC count as 1 USD. Hours are cut with time_bucket (UTC), never date_trunc (the session's zone).
-- premium = vwap - synthetic_price; premium_pct = premium / synthetic_price x 100.
-- Read by: GET /v1/rates/historical (candle_page), premium_series, certificates.
--
-- Planning (why: docs/decisions.md, "Candle page planning"): the query is
-- written once, synthetic_candles_sql(), and run with EXECUTE ... USING, so it is planned for each
-- call's values (never a generic plan) as a query naming the aggregates (TimescaleDB then folds
-- their watermark into a constant). candles_until bounds the page's buckets first, so every
-- aggregate is read over those buckets alone, in one flat join. Nested loops are off (every join is
-- between bucket lists of like size, and the embedded database has no statistics to size them by),
-- and so is JIT (nested loops off inflate every plan's cost). Numbers leave as numeric.
DROP VIEW IF EXISTS candles_with_synthetic CASCADE;
DROP FUNCTION IF EXISTS candles_with_synthetic(text, text, timestamptz, timestamptz, integer) CASCADE;
DROP FUNCTION IF EXISTS candle_page(text, text, timestamptz, timestamptz, integer) CASCADE;
DROP FUNCTION IF EXISTS synthetic_candles_sql() CASCADE;
DROP FUNCTION IF EXISTS synthetic_candles_sql(text) CASCADE;
DROP FUNCTION IF EXISTS candles_until(text, text, timestamptz, timestamptz, integer) CASCADE;

-- candles_until(interval, pair, from, to, limit): where a read of at most `limit` of a pair's
-- candles from `from` ends, exclusive: the bucket of the candle after the last, else `to`.
-- An aggregate's rows come out of its view unordered, so finding the nth candle sorts every row
-- read; a count does not. A window from `from` of limit + 1 buckets holds at most limit + 1
-- candles (one a bucket), so its count says whether the candle is in it: limit + 1 candles, and
-- it is the window's latest. Where some buckets went untraded, the candles still to pass are
-- looked for after the window, in a window that holds them if every bucket was traded, widened
-- fourfold until the candle is in it or it reaches `to`, and sorted: only what remains is sorted.
-- (A read of the whole range would sort every candle of it, for each of a 10,000-candle page's
-- statements.) Each window is a prefix of what remains: the candle found in it is the range's.
CREATE FUNCTION candles_until(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer)
RETURNS timestamptz LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  v_width interval := candle_width(p_interval);
  v_aggregate text := candle_aggregate(p_interval);
  v_from timestamptz := p_from;
  -- candles to pass before the one looked for
  v_pass bigint := p_limit;
  v_end timestamptz;
  v_count bigint;
  v_until timestamptz;
BEGIN
  IF p_limit IS NULL THEN
    RETURN p_to;
  END IF;
  -- a window where one can be told (a closed end, a limit within any page); else the whole range
  IF isfinite(p_to) AND p_limit < 1000000 THEN
    v_end := least(p_to, p_from + v_width * (p_limit + 1));
    EXECUTE format('SELECT count(*), max(bucket) FROM %I WHERE pair = $1 AND bucket >= $2 AND bucket < $3', v_aggregate)
      INTO v_count, v_until USING p_pair, p_from, v_end;
    IF v_count = p_limit + 1 THEN
      RETURN v_until;
    END IF;
    IF v_count <= p_limit THEN
      IF v_end >= p_to THEN
        RETURN p_to;
      END IF;
      v_pass := p_limit - v_count;
      v_from := v_end;
      v_end := least(p_to, v_from + v_width * (v_pass + 1));
    END IF;
    -- (more than limit + 1: `1 day` added in a session zone that changes its clocks stretched the
    -- window by an hour and a bucket; the candle is in this window, sorted below)
  ELSE
    v_end := p_to;
  END IF;
  LOOP
    EXECUTE format($q$
      SELECT bucket FROM %I
      WHERE pair = $1 AND bucket >= $2 AND bucket < $3
      ORDER BY bucket OFFSET $4 LIMIT 1
    $q$, v_aggregate) INTO v_until USING p_pair, v_from, v_end, v_pass;
    IF v_until IS NOT NULL OR v_end IS NULL OR v_end >= p_to THEN
      RETURN coalesce(v_until, p_to);
    END IF;
    v_end := least(p_to, v_from + (v_end - v_from) * 4);
  END LOOP;
END $fn$;

-- The query: each candle of the level's aggregate in [$3, $9) (c), the USDT leg's VWAP in the same
-- bucket (u), and the FX rate in force at the bucket's hour, from its hourly materialisation (m)
-- or, for an hour not in it yet, looked up directly (d). Columns: the candle's (as the `candles`
-- view has them), usd_price, units_per_usd, fresh_sources.
-- Parameters: $1 interval, $2 pair, $3 from, $6 the USDT leg (NULL when the base is a USD coin),
-- $8 quote, $9 until (exclusive).
CREATE FUNCTION synthetic_candles_sql(p_interval text) RETURNS text LANGUAGE sql IMMUTABLE AS $body$
  SELECT format($q$
  SELECT $1::text AS interval, c.bucket, c.pair, c.open, c.high, c.low, c.close, c.pv, c.volume,
         c.trades::numeric AS trades, vwap(c.pv, c.volume) AS vwap, c.first_trade_at, c.last_trade_at,
         CASE WHEN $6 IS NULL THEN 1::numeric ELSE vwap(u.pv, u.volume) END AS usd_price,
         CASE WHEN $6 IS NULL THEN 1::numeric ELSE u.pv END AS usd_pv,
         CASE WHEN $6 IS NULL THEN 1::numeric ELSE u.volume END AS usd_volume,
         coalesce(m.units_per_usd, d.units_per_usd) AS units_per_usd,
         coalesce(m.fresh_sources, d.fresh_sources) AS fresh_sources
  FROM %1$I c
  LEFT JOIN %1$I u ON u.pair = $6 AND u.bucket = c.bucket AND u.bucket >= $3 AND u.bucket < $9
  LEFT JOIN fx_in_force m ON m.currency = $8 AND m.hour = time_bucket(INTERVAL '1 hour', c.bucket)
                         AND m.hour >= time_bucket(INTERVAL '1 hour', $3) AND m.hour < $9
  -- OFFSET 0 keeps the condition in front of the call: the lookup runs only for a missing hour
  LEFT JOIN LATERAL (SELECT * FROM fx_rate_at($8, time_bucket(INTERVAL '1 hour', c.bucket)) WHERE m.hour IS NULL OFFSET 0) d ON true
  WHERE c.pair = $2 AND c.bucket >= $3 AND c.bucket < $9
  $q$, candle_aggregate(p_interval))
$body$;

CREATE FUNCTION candles_with_synthetic(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer DEFAULT NULL)
RETURNS TABLE ("interval" text, bucket timestamptz, pair text, base text, quote text,
               open numeric, high numeric, low numeric, close numeric, volume numeric, trades numeric,
               vwap numeric, first_trade_at timestamptz, last_trade_at timestamptz,
               usd_price numeric, units_per_usd numeric, fx_fresh_sources integer,
               synthetic_price numeric, premium numeric, premium_pct numeric)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
SET jit = off
AS $fn$
DECLARE
  v_base text;
  v_quote text;
BEGIN
  SELECT p.base, p.quote INTO v_base, v_quote FROM public_pairs p WHERE p.pair = p_pair;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE 'SELECT r.interval, r.bucket, r.pair, $7, $8, r.open, r.high, r.low, r.close, r.volume,
         r.trades, r.vwap, r.first_trade_at, r.last_trade_at, r.usd_price, r.units_per_usd, r.fresh_sources,
         r.usd_price * r.units_per_usd,
         r.vwap - r.usd_price * r.units_per_usd,
         (r.vwap - r.usd_price * r.units_per_usd) / (r.usd_price * r.units_per_usd) * 100
  FROM (' || synthetic_candles_sql(p_interval) || ') r
  ORDER BY r.bucket'
  USING p_interval, p_pair, p_from, p_to, p_limit,
        CASE WHEN v_base IN ('USDT', 'USDC') THEN NULL ELSE v_base || 'USDT' END, v_base, v_quote,
        candles_until(p_interval, p_pair, p_from, p_to, p_limit);
END $fn$;

-- candle_page: the same candles, shaped for the wire: the sums their VWAP and synthetic price are
-- computed from exactly (pv / volume; usd_pv / usd_volume x units_per_usd, lib/methodology), beside
-- how their venues' VWAPs in the bucket spread (how many, lowest, highest, mean: the inputs of the
-- confidence rule), and whether the candle is settled: its whole bucket lies at or before the
-- pair's settled_through (pair_settlement), so it is certified and changes only by late trades.
-- Unsettled candles (the open bucket, and closed ones some venue has not reported past yet) may
-- still change. The timestamp comes already written as the contract writes it (buckets start on
-- whole minutes: no fraction). The API reads each row as its record text (p::text: one field to
-- send and decode, not fifteen) and splits it by these columns' order (api/queries/candles.ts
-- parsePageRow); that text is also what candlesDigest hashes, so a column's text is part of it.
CREATE FUNCTION candle_page(p_interval text, p_pair text, p_from timestamptz, p_to timestamptz, p_limit integer)
RETURNS TABLE (t text, open numeric, high numeric, low numeric, close numeric, pv numeric, volume numeric,
               usd_pv numeric, usd_volume numeric, units_per_usd numeric,
               venues integer, venue_min numeric, venue_max numeric, venue_mean numeric, settled boolean)
LANGUAGE plpgsql STABLE
SET enable_nestloop = off
SET jit = off
AS $fn$
DECLARE
  v_base text;
  v_quote text;
  v_width interval := candle_width(p_interval);
  -- the last bucket start whose whole bucket is settled (NULL: nothing settled yet)
  v_settled_from timestamptz;
  -- how the page's venues spread per bucket: read from venue_spread_5m for 5-minute buckets; for
  -- wider ones each venue's VWAP over the bucket is combined from its 5-minute rows (sum pv / sum
  -- volume) first
  v_spread text := CASE v_width
    WHEN INTERVAL '5 minutes' THEN $v$
      SELECT v.bucket, v.venues::integer AS n, v.lowest AS lo, v.highest AS hi, v.mean
      FROM venue_spread_5m v
      WHERE v.pair = $2 AND v.bucket >= $3 AND v.bucket < $9$v$
    ELSE $v$
      SELECT bucket, count(*)::integer AS n, min(vwap) AS lo, max(vwap) AS hi, avg(vwap) AS mean
      FROM (SELECT time_bucket($10, e.bucket) AS bucket, vwap(sum(e.pv), sum(e.volume)) AS vwap
            FROM candles_5m_by_exchange e
            WHERE e.pair = $2 AND e.bucket >= $3 AND e.bucket < $9
            GROUP BY 1, e.exchange) per_venue
      GROUP BY bucket$v$
    END;
BEGIN
  SELECT p.base, p.quote INTO v_base, v_quote FROM public_pairs p WHERE p.pair = p_pair;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT ps.settled_through - v_width INTO v_settled_from FROM pair_settlement ps WHERE ps.pair = p_pair;
  RETURN QUERY EXECUTE $q$SELECT to_char(r.bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'),
         r.open, r.high, r.low, r.close, r.pv, r.volume, r.usd_pv, r.usd_volume, r.units_per_usd,
         coalesce(s.n, 0), s.lo, s.hi, s.mean, coalesce(r.bucket <= $11, false)
  FROM ($q$ || synthetic_candles_sql(p_interval) || ') r LEFT JOIN (' || v_spread || ') s ON s.bucket = r.bucket
  ORDER BY r.bucket'
  USING p_interval, p_pair, p_from, p_to, p_limit,
        CASE WHEN v_base IN ('USDT', 'USDC') THEN NULL ELSE v_base || 'USDT' END, v_base, v_quote,
        candles_until(p_interval, p_pair, p_from, p_to, p_limit),
        v_width, v_settled_from;
END $fn$;
