#!/bin/sh
# The streaming replica of docker compose profile `scale` (the official TimescaleDB image, run as
# its postgres user). First start: a copy of the primary (pg_basebackup with -R: standby.signal and
# the connection to the primary, password included; a physical replication slot, so the primary
# keeps the WAL the replica has not received). Every start: a hot standby that replays the
# primary's WAL and answers the API's read-only queries (DATABASE_READ_URL).
set -eu
: "${PRIMARY_HOST:=timescaledb}" "${PRIMARY_DB:=afrates}" "${REPLICATION_USER:=afrates}" "${REPLICATION_SLOT:=replica1}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h "$PRIMARY_HOST" -U "$REPLICATION_USER" -d "$PRIMARY_DB"; do sleep 1; done
  # the slot survives a replica whose volume was wiped: reused, not created twice
  slot=$(psql -h "$PRIMARY_HOST" -U "$REPLICATION_USER" -d "$PRIMARY_DB" -tAc \
    "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$REPLICATION_SLOT'")
  create=-C
  [ "$slot" = 1 ] && create=
  pg_basebackup -h "$PRIMARY_HOST" -U "$REPLICATION_USER" -D "$PGDATA" -X stream -R -c fast $create -S "$REPLICATION_SLOT"
  chmod 700 "$PGDATA"
fi
# hot_standby_feedback: the primary keeps the rows a replica query still reads, so replay does not
# cancel it (the API retries a cancelled read on the primary, at a cost)
exec postgres -c hot_standby=on -c hot_standby_feedback=on
