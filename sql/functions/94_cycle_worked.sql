-- cycle_worked(rows_by_source, errors): whether a collection cycle worked: at least one of its
-- sources delivered without error (one venue down leaves the collector working; GET /v1/status
-- names the failing source). The one definition of it.
-- Read by: collector_state (GET /v1/health), the status page's cycles and uptime (api/queries/status.ts).
DROP FUNCTION IF EXISTS cycle_worked(jsonb, jsonb) CASCADE;

CREATE FUNCTION cycle_worked(p_rows_by_source jsonb, p_errors jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT EXISTS (
    SELECT 1 FROM jsonb_object_keys(p_rows_by_source) AS s(source)
    WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_errors) AS e WHERE e->>'source' = s.source))
$$;
