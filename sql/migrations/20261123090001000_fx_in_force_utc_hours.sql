-- Up Migration
-- fx_in_force holds UTC hour starts. Its check used date_trunc('hour', ...), which truncates in the
-- writing session's TimeZone: from a session at +05:30 it accepted hh:30 UTC and refused hh:00.
-- Rows off a UTC hour could only come from such a session and no reader matches them: they go,
-- and readers look those hours up directly (fx_rate_at) until fx_in_force_refresh writes them.
DELETE FROM fx_in_force WHERE time_bucket(INTERVAL '1 hour', hour) <> hour;

ALTER TABLE fx_in_force
  DROP CONSTRAINT fx_in_force_hour_check,
  ADD CONSTRAINT fx_in_force_hour_check CHECK (time_bucket(INTERVAL '1 hour', hour) = hour);

-- Down Migration
ALTER TABLE fx_in_force
  DROP CONSTRAINT fx_in_force_hour_check,
  ADD CONSTRAINT fx_in_force_hour_check CHECK (date_trunc('hour', hour) = hour);
