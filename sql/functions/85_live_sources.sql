-- live_sources(at): for every public pair, each venue's newest 5-minute candle at or before `at`
-- (within live_window_hours): the venue's rate (its VWAP), volume (its weight in the combined VWAP) and the
-- time of its newest trade (freshness), and its trade count.
-- Read by: the live snapshot (api/live/snapshot.ts), which combines these into the published rate.
DROP FUNCTION IF EXISTS live_sources(timestamptz);

CREATE FUNCTION live_sources(p_at timestamptz)
RETURNS TABLE (pair text, exchange text, bucket timestamptz, vwap numeric, pv numeric, volume numeric,
               trades bigint, last_trade_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT DISTINCT ON (e.pair, e.exchange) e.pair, e.exchange, e.bucket, vwap(e.pv, e.volume), e.pv, e.volume,
         e.trades, e.last_trade_at
  FROM candles_5m_by_exchange e
  JOIN public_pairs p ON p.pair = e.pair
  WHERE e.bucket <= p_at AND e.bucket > p_at - make_interval(hours => methodology_parameter('live_window_hours')::int)
  ORDER BY e.pair, e.exchange, e.bucket DESC
$$;
