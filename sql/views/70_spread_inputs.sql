-- spread_inputs(pair): the newest 5-minute candle of each venue trading the pair (last 24 h), and
-- of the pair across venues (exchange = NULL). bid ~ the candle's low, ask ~ its high: an
-- approximation from trades, not order-book depth.
-- Read by: GET /v1/rates/spread.
DROP FUNCTION IF EXISTS spread_inputs(text, timestamptz);

CREATE FUNCTION spread_inputs(p_pair text, p_now timestamptz DEFAULT now())
RETURNS TABLE (exchange text, bucket timestamptz, bid numeric, ask numeric, vwap numeric,
               last_trade_at timestamptz)
LANGUAGE sql STABLE AS $$
  (SELECT DISTINCT ON (e.exchange) e.exchange, e.bucket, e.low, e.high, e.pv / e.volume, e.last_trade_at
   FROM candles_5m_by_exchange e
   WHERE e.pair = p_pair AND e.bucket > p_now - INTERVAL '24 hours' AND e.bucket <= p_now
   ORDER BY e.exchange, e.bucket DESC)
  UNION ALL
  (SELECT NULL, c.bucket, c.low, c.high, c.vwap, c.last_trade_at
   FROM candles c
   WHERE c.interval = '5m' AND c.pair = p_pair AND c.bucket > p_now - INTERVAL '24 hours' AND c.bucket <= p_now
   ORDER BY c.bucket DESC
   LIMIT 1)
$$;
