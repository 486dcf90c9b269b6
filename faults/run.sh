#!/usr/bin/env bash
# The fault suite (make faults): the real programs as separate hosts, faults from a schedule, a
# checker over the whole history (docs/operations.md, "The fault suite"). Needs root (network
# namespaces, veth, tc) and a PostgreSQL server build with TimescaleDB: FAULTS_PG_BIN (or
# TEST_PG_BIN) is the directory of its initdb, pg_ctl, pg_basebackup and postgres. Skips, saying
# what it lacks, without them. Every namespace, veth and process it makes is removed at the end,
# also when interrupted.
set -uo pipefail
cd "$(dirname "$0")/.."

PGBIN="${FAULTS_PG_BIN:-${TEST_PG_BIN:-}}"
skip() { echo "faults: skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth pairs, tc): sudo make faults"
[ -n "$PGBIN" ] || skip "needs FAULTS_PG_BIN (or TEST_PG_BIN): the bin directory of a PostgreSQL 15-17 build with TimescaleDB (initdb, pg_ctl, pg_basebackup, postgres)"
for b in initdb pg_ctl pg_basebackup postgres psql; do [ -x "$PGBIN/$b" ] || skip "no $b in FAULTS_PG_BIN=$PGBIN"; done
ls "$PGBIN"/../lib/timescaledb.so "$PGBIN"/../lib/postgresql/timescaledb.so >/dev/null 2>&1 \
  || [ -e "$PGBIN/../lib/timescaledb.so" ] || [ -e "$PGBIN/../lib/postgresql/timescaledb.so" ] \
  || skip "no timescaledb.so beside FAULTS_PG_BIN=$PGBIN (../lib or ../lib/postgresql): a server without TimescaleDB"
for b in ip tc redis-server runuser; do command -v "$b" >/dev/null || skip "no $b on PATH"; done
id -u postgres >/dev/null 2>&1 || skip "no postgres user (initdb refuses root)"
[ -x node_modules/.bin/tsx ] || skip "run make install first"

export FAULTS_PREFIX="${FAULTS_PREFIX:-afx}"
P="$FAULTS_PREFIX"
HOSTS="ctl pg1 pg2 redis sim p1 p2 a1 a2"
if ip netns list | grep -q "^$P-"; then
  echo "faults: namespaces $P-* exist (another run, or one killed with SIGKILL): remove them with"
  echo "  for n in \$(ip netns list | awk '/^$P-/{print \$1}'); do ip netns pids \$n | xargs -r kill -9; ip netns del \$n; done"
  exit 1
fi
WORK="$(mktemp -d /tmp/afrates-faults.XXXXXX)"
chmod 755 "$WORK"
export FAULTS_WORK="$WORK" FAULTS_PG_BIN="$PGBIN"

cleanup() {
  trap - EXIT INT TERM HUP
  echo "faults: removing namespaces, veths and processes"
  for h in $HOSTS sw; do
    ip netns list | grep -q "^$P-$h\b" || continue
    for pid in $(ip netns pids "$P-$h" 2>/dev/null); do kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
  done
  sleep 0.5
  for h in $HOSTS sw; do ip netns del "$P-$h" 2>/dev/null; done
  if [ -z "${FAULTS_KEEP:-}" ]; then rm -rf "$WORK"; else echo "faults: kept $WORK"; fi
}
trap cleanup EXIT
child=
trap 'echo "faults: interrupted"; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && sleep 3; exit 130' INT TERM HUP

# The hosts: two networks on two bridges in a switch namespace. 10.77.0.0/24 is the service
# network (database, Redis, pipelines, APIs, the clients' host), 10.77.1.0/24 the market's (the
# market, the pipelines, the clients' host for its control). Each host's link is a veth pair whose
# switch end is <host>-a (service) or <host>-b (market): the faults act on those.
declare -A ADDR=([ctl]=2 [pg1]=10 [pg2]=11 [redis]=12 [sim]=13 [p1]=21 [p2]=22 [a1]=31 [a2]=32)
declare -A NETS=([ctl]="a b" [pg1]=a [pg2]=a [redis]=a [sim]=b [p1]="a b" [p2]="a b" [a1]=a [a2]=a)
ip netns add "$P-sw" || exit 1
ip -n "$P-sw" link set lo up
for br in a b; do
  ip -n "$P-sw" link add "br$br" type bridge && ip -n "$P-sw" link set "br$br" up || exit 1
done
for h in $HOSTS; do
  ip netns add "$P-$h" || exit 1
  ip -n "$P-$h" link set lo up
  i=0
  for n in ${NETS[$h]}; do
    net=$([ "$n" = a ] && echo 0 || echo 1)
    ip link add "$h-$n" netns "$P-sw" type veth peer name "eth$i" netns "$P-$h" || exit 1
    ip -n "$P-sw" link set "$h-$n" master "br$n" up
    ip -n "$P-$h" addr add "10.77.$net.${ADDR[$h]}/24" dev "eth$i"
    ip -n "$P-$h" link set "eth$i" up
    i=$((i + 1))
  done
done
echo "faults: hosts up: $(for h in $HOSTS; do echo -n "$h=10.77.x.${ADDR[$h]} "; done)"
# the suite runs on the clients' host; it starts every other program with ip netns exec
# (in the background, so that an interrupt reaches the trap at once)
ip netns exec "$P-ctl" node --import tsx faults/suite.ts &
child=$!
wait "$child"
rc=$?
child=
exit $rc
