-- Up Migration
-- API keys: only the SHA-256 of a key is stored; the key itself is shown once, at issue.
CREATE TABLE api_keys (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  key_hash       text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  key_prefix     text        NOT NULL,   -- first characters, so operators can tell keys apart
  tier           text        NOT NULL CHECK (tier IN ('free', 'builder', 'professional', 'enterprise')),
  customer_name  text,
  email          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  revoked_at     timestamptz
);
-- At most one active free key per email (decisions.md).
CREATE UNIQUE INDEX api_keys_one_free_per_email ON api_keys (lower(email))
  WHERE tier = 'free' AND revoked_at IS NULL;

-- Monthly usage per customer (a key id, or a marketplace gateway user), calendar month UTC.
-- Written through by the rate limiter so usage survives restarts.
CREATE TABLE api_usage (
  customer   text    NOT NULL,
  month      date    NOT NULL CHECK (extract(day FROM month) = 1),
  requests   bigint  NOT NULL DEFAULT 0,
  PRIMARY KEY (customer, month)
);

-- Down Migration
DROP TABLE api_usage;
DROP TABLE api_keys;
