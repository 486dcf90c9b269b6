-- Up Migration
-- Customers own keys: the dashboard (web/dashboard) lets a customer hold a key per environment,
-- rotate and revoke them, and every key of a customer shares its tier and its limits (a second key
-- is never a second budget, and rotating a key never resets usage).
--
-- A customer's id is the id of its first key. Usage has always been recorded per `key:<id>`
-- (api_usage.customer, rate-limit counters); with this rule every existing key's usage is already
-- its customer's, and the limiter's subject `key:<customer id>` needs no renaming.
CREATE TABLE customers (
  id          bigint      PRIMARY KEY,
  tier        text        NOT NULL CHECK (tier IN ('free', 'builder', 'professional', 'enterprise')),
  name        text,
  email       text,
  created_at  timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE api_keys
  ADD COLUMN customer_id  bigint,
  ADD COLUMN label        text CHECK (label IS NULL OR length(label) BETWEEN 1 AND 60),
  -- written at most once a minute per key, off the request path (api/keys/store.ts)
  ADD COLUMN last_used_at timestamptz;

-- Existing keys: free keys of one email become one customer (there was one free key per email at a
-- time; its earlier, revoked ones are the same person's); every other key is its own customer.
UPDATE api_keys k SET customer_id = CASE
  WHEN k.tier = 'free' AND k.email IS NOT NULL
    THEN (SELECT min(o.id) FROM api_keys o WHERE o.tier = 'free' AND lower(o.email) = lower(k.email))
  ELSE k.id END;
INSERT INTO customers (id, tier, name, email, created_at)
  SELECT id, tier, customer_name, email, created_at FROM api_keys WHERE id = customer_id;

-- usage recorded under a merged key moves to its customer
INSERT INTO api_usage (customer, month, requests)
  SELECT 'key:' || k.customer_id, u.month, sum(u.requests)
  FROM api_usage u JOIN api_keys k ON u.customer = 'key:' || k.id
  WHERE k.customer_id <> k.id
  GROUP BY 1, 2
  ON CONFLICT (customer, month) DO UPDATE SET requests = api_usage.requests + excluded.requests;
DELETE FROM api_usage u USING api_keys k WHERE u.customer = 'key:' || k.id AND k.customer_id <> k.id;

ALTER TABLE api_keys
  ALTER COLUMN customer_id SET NOT NULL,
  ADD CONSTRAINT api_keys_customer FOREIGN KEY (customer_id) REFERENCES customers (id);
CREATE INDEX api_keys_customer_active ON api_keys (customer_id) WHERE revoked_at IS NULL;

-- One free customer per email (was: one active free key per email). A free customer may hold
-- several keys (one per environment); they share the free tier's limits.
DROP INDEX api_keys_one_free_per_email;
CREATE UNIQUE INDEX customers_one_free_per_email ON customers (lower(email)) WHERE tier = 'free';

-- Requests per key customer and UTC day, written by the same flush as api_usage
-- (api/limits/limiter.ts): the dashboard's chart of daily usage.
CREATE TABLE api_usage_daily (
  customer  text   NOT NULL,
  day       date   NOT NULL,
  requests  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (customer, day)
);

-- Down Migration
DROP TABLE api_usage_daily;
DROP INDEX customers_one_free_per_email;
CREATE UNIQUE INDEX api_keys_one_free_per_email ON api_keys (lower(email)) WHERE tier = 'free' AND revoked_at IS NULL;
DROP INDEX api_keys_customer_active;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_customer, DROP COLUMN customer_id, DROP COLUMN label, DROP COLUMN last_used_at;
DROP TABLE customers;
