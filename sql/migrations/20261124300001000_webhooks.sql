-- Up Migration
-- Alert webhooks. A customer registers endpoints (api/routes/webhooks.ts); whoever notices
-- something writes an event to the outbox, webhook_events (lib/webhooks/events.ts); the delivery
-- worker (pipeline/webhooks/worker.ts) fans each event out into one delivery per subscribed
-- endpoint and delivers them, each attempt recorded. All of it lives here, so deliveries under way
-- survive a restart.
CREATE TABLE webhook_endpoints (
  id                bigserial   PRIMARY KEY,
  customer_id       bigint      NOT NULL REFERENCES customers (id),
  url               text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  description       text        CHECK (description IS NULL OR length(description) BETWEEN 1 AND 200),
  -- event types subscribed to, a JSON array of strings
  events            jsonb       NOT NULL CHECK (jsonb_typeof(events) = 'array'),
  -- pairs its pair events are limited to, a JSON array; null: every pair
  pairs             jsonb       CHECK (pairs IS NULL OR jsonb_typeof(pairs) = 'array'),
  divergence_pct    numeric     NOT NULL CHECK (divergence_pct > 0),
  stale_seconds     integer     NOT NULL CHECK (stale_seconds > 0),
  heartbeat_seconds integer     NOT NULL CHECK (heartbeat_seconds > 0),
  heartbeat_due_at  timestamptz,
  -- the signing secret sealed with AES-256-GCM (lib/webhooks/secrets.ts), never the secret itself;
  -- after a rotation the previous one is still signed with until previous_secret_until
  secret                 text        NOT NULL,
  secret_prefix          text        NOT NULL,
  previous_secret        text,
  previous_secret_until  timestamptz,
  enabled           boolean     NOT NULL DEFAULT true,
  disabled_at       timestamptz,
  disabled_reason   text,
  -- the first failed attempt since the last delivered one: failing for 24 hours disables it
  failing_since     timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_customer ON webhook_endpoints (customer_id);

CREATE TABLE webhook_events (
  id            text        PRIMARY KEY,
  type          text        NOT NULL,
  pair          text,
  -- for this endpoint only (its alerts, heartbeats, test events); null: every subscriber
  endpoint_id   bigint      REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL,
  data          jsonb       NOT NULL,
  -- when the worker made its deliveries; null: not yet
  fanned_out_at timestamptz
);
CREATE INDEX webhook_events_waiting ON webhook_events (created_at) WHERE fanned_out_at IS NULL;
CREATE INDEX webhook_events_created ON webhook_events (created_at);

CREATE TABLE webhook_deliveries (
  id              bigserial   PRIMARY KEY,
  event_id        text        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id     bigint      NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer     NOT NULL DEFAULT 0,
  -- pending: when it is next tried (a claimed delivery's lease ends then); null once finished
  next_attempt_at timestamptz,
  created_at      timestamptz NOT NULL,
  finished_at     timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

CREATE TABLE webhook_attempts (
  delivery_id  bigint      NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt      integer     NOT NULL,
  at           timestamptz NOT NULL,
  duration_ms  integer     NOT NULL,
  -- the HTTP status answered; null: no answer (timeout, refused, connection failed)
  status       integer,
  -- why it failed; null: delivered
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Alerts in force, so an alert is sent once when it starts and once when it ends, across restarts
-- (pipeline/webhooks/alerts.ts). endpoint_id 0: an alert of every subscriber's (a source failing).
CREATE TABLE webhook_alerts (
  endpoint_id  bigint      NOT NULL,
  kind         text        NOT NULL,
  subject      text        NOT NULL,
  since        timestamptz NOT NULL,
  -- consecutive evaluations the condition has been clearly over (it ends at a few)
  calm         integer     NOT NULL DEFAULT 0,
  PRIMARY KEY (endpoint_id, kind, subject)
);

-- Down Migration
DROP TABLE webhook_alerts;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
