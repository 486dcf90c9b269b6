#!/bin/sh
# Mounted into the primary's /docker-entrypoint-initdb.d: runs once, when its data volume is first
# initialised. Lets streaming replicas (docker compose profile `scale`) connect for replication
# with a password, as the image lets ordinary connections in, and keeps enough WAL for a replica
# that is briefly away (a replica's slot keeps the rest, up to max_slot_wal_keep_size, so a replica
# gone for good cannot fill the primary's disk).
# A primary initialised before this script was mounted: docs/operations.md, "Scaling reads".
set -eu
grep -q '^host replication all all scram-sha-256' "$PGDATA/pg_hba.conf" \
  || echo 'host replication all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
ALTER SYSTEM SET wal_keep_size = '1GB';
ALTER SYSTEM SET max_slot_wal_keep_size = '8GB';
SQL
