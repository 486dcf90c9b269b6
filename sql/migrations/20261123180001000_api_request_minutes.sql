-- Up Migration
-- What GET /v1/health's metrics sum: every API process's answered requests per minute (health
-- itself not counted), their 5xx and their total latency. Each process adds what it counted every
-- few seconds and at shutdown (api/middleware/metrics.ts); rows older than a day and an hour are
-- deleted as it does. Kept in memory alone, they started again from 0 at every restart.
CREATE TABLE api_request_minutes (
  minute      timestamptz       PRIMARY KEY,
  requests    bigint            NOT NULL,
  errors      bigint            NOT NULL,
  latency_ms  double precision  NOT NULL
);

-- Down Migration
DROP TABLE api_request_minutes;
