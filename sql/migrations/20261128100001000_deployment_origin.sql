-- Up Migration
-- Where the deployment's secret was made: the server's system identifier and the database's oid
-- (lib/db/deployment.ts). A database restored from a dump or copied into another database or
-- onto another server is somewhere else: each start compares, and a copy makes its own secret, so
-- a staging service restored from production never shares production's part of Redis. NULL until
-- the first start records it (a deployment made before this column is where it is now).
ALTER TABLE deployment ADD COLUMN made_in text;

-- Down Migration
ALTER TABLE deployment DROP COLUMN made_in;
