-- aggregate: venue_spread_5m
-- venue_spread_5m: how the venues' 5-minute VWAPs of a pair spread, per bucket: how many venues
-- traded, their lowest, highest and mean VWAP. A hierarchical continuous aggregate on
-- candles_5m_by_exchange (same 5-minute buckets), so a page of 10,000 candles reads its
-- verification inputs (sources_count, dispersion) as rows instead of grouping 20,000 venue rows.
-- Read by: candle_page (sql/functions/40_candles_with_synthetic.sql) for 5-minute pages; wider ones
-- combine candles_5m_by_exchange themselves (a venue's hourly VWAP is not a mean of its 5-minute ones).
-- Refresh: after candles_5m_by_exchange in the same pass (pipeline only, from its frontier).
DROP MATERIALIZED VIEW IF EXISTS venue_spread_5m CASCADE;

CREATE MATERIALIZED VIEW venue_spread_5m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT time_bucket(INTERVAL '5 minutes', bucket) AS bucket,
       pair,
       count(*)          AS venues,
       min(pv / volume)  AS lowest,
       max(pv / volume)  AS highest,
       avg(pv / volume)  AS mean
FROM candles_5m_by_exchange
GROUP BY time_bucket(INTERVAL '5 minutes', bucket), pair
WITH NO DATA;
