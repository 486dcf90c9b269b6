-- fx_in_force_refresh(from, to): (re)computes fx_in_force for every public quote currency and every
-- hour start in [from, to] (both truncated to the hour) as fx_rate_at() gives it, and returns how
-- many rows it wrote. from = NULL: from the hour after the newest row (or the first observation's
-- hour), the steady state that adds each new hour once. An FX observation at time T can change the
-- rate in force at any hour from T on (the newest-within-30-days fallback reaches a month), so the
-- writer of FX rates calls it with from = T for observations older than the current hour.
-- Hours are UTC hours in any session (time_bucket; date_trunc would use the session's TimeZone).
-- Called by: pipeline/store.ts insertFxRates (history), pipeline/publish.ts (each publish).
DROP FUNCTION IF EXISTS fx_in_force_refresh(timestamptz, timestamptz);

CREATE FUNCTION fx_in_force_refresh(p_from timestamptz, p_to timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_from timestamptz := time_bucket(INTERVAL '1 hour', p_from);
  v_to timestamptz := time_bucket(INTERVAL '1 hour', p_to);
  v_rows integer;
BEGIN
  IF v_from IS NULL THEN
    SELECT coalesce(max(hour) + INTERVAL '1 hour', (SELECT time_bucket(INTERVAL '1 hour', min(time)) + INTERVAL '1 hour' FROM fx_rates))
      INTO v_from FROM fx_in_force;
  END IF;
  IF v_from IS NULL OR v_from > v_to THEN
    RETURN 0;
  END IF;
  INSERT INTO fx_in_force (currency, hour, units_per_usd, source_updated_at, fresh_sources)
  SELECT q.quote, h.hour, f.units_per_usd, f.source_updated_at, f.fresh_sources
  FROM (SELECT DISTINCT quote FROM public_pairs) q
  CROSS JOIN generate_series(v_from, v_to, INTERVAL '1 hour') AS h(hour)
  CROSS JOIN LATERAL fx_rate_at(q.quote, h.hour) f
  WHERE f.units_per_usd IS NOT NULL -- no observation within 30 days: nothing in force
  ON CONFLICT (currency, hour) DO UPDATE
    SET units_per_usd = excluded.units_per_usd, source_updated_at = excluded.source_updated_at,
        fresh_sources = excluded.fresh_sources;
  GET DIAGNOSTICS v_rows = ROW_COUNT;
  RETURN v_rows;
END $$;
