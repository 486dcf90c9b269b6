-- Up Migration
-- This deployment's identity: a secret made at random when its database is first migrated, one row.
-- Every API process of the deployment reads it (api/redis.ts RedisScope): its Redis keys live under
-- a digest of it and its cached entries are sealed with it, so two deployments on one Redis database
-- never read each other's keys, customers or counters. A random value, not the server's system
-- identifier: two databases on one server share that, and a restored copy gets a new one anyway.
CREATE TABLE deployment (
  only_row   boolean     PRIMARY KEY DEFAULT true CHECK (only_row),
  secret     text        NOT NULL DEFAULT encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text || clock_timestamp()::text, 'UTF8')), 'hex'),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO deployment DEFAULT VALUES;

-- Down Migration
DROP TABLE deployment;
