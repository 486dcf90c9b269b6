-- spread_inputs(pair, now): the newest settled 5-minute bucket in which the pair traded (within
-- the last 24 hours): each venue's candle in that bucket, and the pair's across venues
-- (exchange = NULL). bid ~ the candle's low, ask ~ its high: an approximation from trades, not
-- order-book depth. Settled (pair_settlement: every venue has collected past its end, or the lag
-- has passed), not merely closed: just after an edge one venue may have reported and the others
-- not, and the answer for that timestamp would change minutes later. One bucket for all, so the
-- top level and its sources agree.
-- Read by: GET /v1/rates/spread.
DROP FUNCTION IF EXISTS spread_inputs(text, timestamptz);

CREATE FUNCTION spread_inputs(p_pair text, p_now timestamptz DEFAULT now())
RETURNS TABLE (exchange text, bucket timestamptz, bid numeric, ask numeric, vwap numeric,
               last_trade_at timestamptz)
LANGUAGE sql STABLE AS $$
  WITH newest AS (
    SELECT c.bucket, c.low, c.high, c.vwap, c.last_trade_at
    FROM candles c
    WHERE c.interval = '5m' AND c.pair = p_pair
      AND c.bucket > p_now - INTERVAL '24 hours' AND c.bucket <= p_now - INTERVAL '5 minutes'
      AND c.bucket + INTERVAL '5 minutes' <= (SELECT s.settled_through FROM pair_settlement s WHERE s.pair = p_pair)
    ORDER BY c.bucket DESC
    LIMIT 1
  )
  SELECT e.exchange, e.bucket, e.low, e.high, vwap(e.pv, e.volume), e.last_trade_at
  FROM candles_5m_by_exchange e JOIN newest n ON e.bucket = n.bucket
  WHERE e.pair = p_pair
  UNION ALL
  SELECT NULL, n.bucket, n.low, n.high, n.vwap, n.last_trade_at FROM newest n
$$;
