-- collector_state: what GET /v1/health reports about collection, in one row.
-- trades_at / fx_at: the newest cycle of each kind that worked (cycle_worked).
-- market: where the newest cycle's data came from ('simulated' is labelled as such).
-- newest_trade / newest_fx: the data ages.
-- pipeline: which processes collect (seen in the last 30 seconds: host, pid, role, venues, last
-- seen) and which one publishes (the holder of an unexpired publisher lease), as JSON.
DROP VIEW IF EXISTS collector_state;

CREATE VIEW collector_state AS
WITH working AS (
  SELECT c.kind, c.finished_at
  FROM ingest_cycles c
  WHERE c.finished_at > now() - INTERVAL '2 days' AND cycle_worked(c.rows_by_source, c.errors)
)
SELECT (SELECT max(finished_at) FROM working WHERE kind = 'trades') AS trades_at,
       (SELECT max(finished_at) FROM working WHERE kind = 'fx') AS fx_at,
       (SELECT market FROM ingest_cycles ORDER BY id DESC LIMIT 1) AS market,
       (SELECT max(time) FROM trades WHERE time > now() - INTERVAL '7 days') AS newest_trade,
       (SELECT max(time) FROM fx_rates WHERE time > now() - INTERVAL '7 days') AS newest_fx,
       (SELECT jsonb_build_object(
          'publisher', (SELECT jsonb_build_object('host', l.host, 'pid', l.pid, 'since', l.taken_at) FROM publisher_lease l WHERE l.expires_at > now()),
          'processes', coalesce((
            SELECT jsonb_agg(jsonb_build_object('host', p.host, 'pid', p.pid, 'role', p.role, 'venues', p.venues, 'last_seen', p.last_seen,
                                                'publisher', coalesce(p.id = l.holder AND l.expires_at > now(), false)) ORDER BY p.host, p.pid)
            FROM processes p LEFT JOIN publisher_lease l ON true
            WHERE p.last_seen > now() - INTERVAL '30 seconds'), '[]'::jsonb))) AS pipeline;
