-- settlement_candidates(now, lag): for every public pair, how far its 5-minute buckets may be
-- settled now, beside how far they are (pair_settlement). A bucket is settled when every venue
-- serving the pair, and every venue serving its USDT leg (the synthetic check reads it), has
-- collected past its end (venue_health.collected_through), or `lag` after it ends, whichever comes
-- first; never past `now`. `candidate` is a bucket edge: the buckets ending at or before it.
-- Called by: pipeline/settle.ts, after every refresh.
DROP FUNCTION IF EXISTS settlement_candidates(timestamptz, interval);

CREATE FUNCTION settlement_candidates(p_now timestamptz, p_lag interval)
RETURNS TABLE (pair text, settled_through timestamptz, candidate timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT p.pair, s.settled_through,
         time_bucket(INTERVAL '5 minutes', LEAST(p_now, GREATEST(p_now - p_lag, v.collected)))
  FROM public_pairs p
  LEFT JOIN pair_settlement s ON s.pair = p.pair
  LEFT JOIN LATERAL (
    -- a venue that has never caught up counts as behind: only the lag settles its buckets
    SELECT min(coalesce(h.collected_through, '-infinity'::timestamptz)) AS collected
    FROM venue_markets m
    LEFT JOIN venue_health h ON h.exchange = m.exchange AND h.pair = m.pair
    WHERE m.pair IN (p.pair, p.base || 'USDT')
  ) v ON true
$$;
