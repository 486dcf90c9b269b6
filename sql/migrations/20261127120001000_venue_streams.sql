-- Up Migration
-- Each pipeline process's venue streams as it last reported them (pipeline/streams/state.ts): one
-- row per venue and process, written on every change of state and every 30 s, so an API process
-- anywhere can say which venues arrive by stream and which by REST alone (GET /v1/health, /status).
-- A row not written for 90 s is a process gone, and counts for nothing.
CREATE TABLE venue_streams (
  exchange        text        NOT NULL,
  process         text        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('connecting', 'open', 'reconnecting', 'stopped')),
  connections     integer     NOT NULL CHECK (connections >= 0),
  open            integer     NOT NULL CHECK (open >= 0),
  reconnects      integer     NOT NULL CHECK (reconnects >= 0),
  last_error      text,
  last_message_at timestamptz,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (exchange, process)
);

-- Down Migration
DROP TABLE venue_streams;
