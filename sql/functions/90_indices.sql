-- Composite indices. Read by: GET /v1/indices (value now and 24 hours earlier for change_24h).

-- index_weights: MXNCI's fixed basket. Change a weight here and nowhere else.
DROP VIEW IF EXISTS index_weights CASCADE;
CREATE VIEW index_weights (index_name, pair, weight) AS
VALUES ('MXNCI', 'BTCNGN', 0.60), ('MXNCI', 'ETHNGN', 0.25), ('MXNCI', 'USDTNGN', 0.15);

-- index_mxnci(at): Nigerian crypto composite = sum(weight x price), price = VWAP of the
-- component's newest 5-minute candle at or before `at` (within 24 hours). NULL value when a
-- component has no such candle: a basket with a missing leg is not the index.
DROP FUNCTION IF EXISTS index_mxnci(timestamptz);
CREATE FUNCTION index_mxnci(p_at timestamptz, OUT value numeric, OUT components jsonb)
LANGUAGE sql STABLE AS $$
  WITH priced AS (
    SELECT w.pair, w.weight, last_c.vwap AS price
    FROM index_weights w
    LEFT JOIN LATERAL (
      SELECT c.vwap FROM candles c
      WHERE c.interval = '5m' AND c.pair = w.pair
        AND c.bucket <= p_at AND c.bucket > p_at - INTERVAL '24 hours'
      ORDER BY c.bucket DESC LIMIT 1
    ) AS last_c ON true
    WHERE w.index_name = 'MXNCI'
  )
  SELECT CASE WHEN bool_and(price IS NOT NULL) THEN sum(weight * price) END,
         jsonb_object_agg(pair, jsonb_build_object('price', price, 'weight', weight))
           FILTER (WHERE price IS NOT NULL)
  FROM priced
$$;

-- index_acli(at): African crypto liquidity index = USD value of everything traded on the public
-- pairs in the 24 hours before `at` (5-minute buckets starting in [at - 24 h, at)), each pair's
-- quote volume sum(price x amount) divided by USD/QUOTE at `at`.
-- components: pair -> {price: the pair's newest 5-minute VWAP, weight: its share of the volume}.
-- Unknown (NULL value, no components) when the 24 hours reach back before the first candle of
-- all: a service that has collected for two hours knows two hours' volume, not a day's, and its
-- change against 24 hours earlier would be meaningless (docs/decisions.md, "ACLI is unknown").
DROP FUNCTION IF EXISTS index_acli(timestamptz);
CREATE FUNCTION index_acli(p_at timestamptz, OUT value numeric, OUT components jsonb)
LANGUAGE sql STABLE AS $$
  WITH per_pair AS (
    SELECT c.pair, sum(c.pv) / (fx_rate_at(p.quote, p_at)).units_per_usd AS usd_volume,
           (array_agg(c.vwap ORDER BY c.bucket DESC))[1] AS price
    FROM candles c
    JOIN public_pairs p ON p.pair = c.pair
    WHERE c.interval = '5m' AND c.bucket >= p_at - INTERVAL '24 hours' AND c.bucket < p_at
      AND p_at - INTERVAL '24 hours' >= (SELECT f.bucket FROM candles_5m f ORDER BY f.bucket LIMIT 1)
    GROUP BY c.pair, p.quote
  ),
  total AS (SELECT sum(usd_volume) AS usd_volume FROM per_pair)
  SELECT total.usd_volume,
         jsonb_object_agg(per_pair.pair, jsonb_build_object('price', per_pair.price,
                                                            'weight', per_pair.usd_volume / total.usd_volume))
  FROM per_pair, total
  WHERE per_pair.usd_volume IS NOT NULL
  GROUP BY total.usd_volume
$$;
