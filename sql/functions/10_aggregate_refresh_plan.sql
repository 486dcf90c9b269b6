-- aggregate_refresh_plan: every continuous aggregate, parents before children, with its bucket
-- width. Called by lib/db/refresh.ts after each ingest (the embedded database has no background
-- workers). Reads TimescaleDB's catalog because the public information views do not expose the
-- hierarchy. Only the aggregates of the session's schema: a rebuild (lib/db/rebuild.ts) builds
-- aggregates of the same names in a schema of its own, which no refresh pass may take for the live ones.
DROP VIEW IF EXISTS aggregate_refresh_plan;

CREATE VIEW aggregate_refresh_plan AS
WITH RECURSIVE tree AS (
  SELECT ca.mat_hypertable_id, ca.user_view_name::text AS view_name, 0 AS depth
  FROM _timescaledb_catalog.continuous_agg ca
  WHERE ca.parent_mat_hypertable_id IS NULL AND ca.user_view_schema = current_schema()
  UNION ALL
  SELECT ca.mat_hypertable_id, ca.user_view_name::text, tree.depth + 1
  FROM _timescaledb_catalog.continuous_agg ca
  JOIN tree ON ca.parent_mat_hypertable_id = tree.mat_hypertable_id
  WHERE ca.user_view_schema = current_schema()
)
SELECT tree.view_name, tree.depth, bf.bucket_width::interval AS bucket_width
FROM tree
JOIN _timescaledb_catalog.continuous_aggs_bucket_function bf USING (mat_hypertable_id)
ORDER BY tree.depth, tree.view_name;
