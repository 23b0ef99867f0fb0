#!/usr/bin/env bash
# `pnpm test:setup` (the first step of `pnpm test`): makes sure what the test suite talks to is there — Redis at
# REDIS_URL, PostgreSQL at DATABASE_URL (defaults redis://127.0.0.1:6379 and
# postgres://postgres@127.0.0.1:5432/test), Chromium at /usr/bin/chromium for the hosted-checkout browser test, and
# for the tests of a merchant's fleet a Redis Cluster at REDIS_CLUSTER_URLS and PgBouncer at PGBOUNCER_URL
# (scripts/scale-services.sh says how they are started).
#
# As root on Debian/Ubuntu (apt-get), it installs the missing Debian packages and starts local servers: a fresh
# machine needs nothing else. Elsewhere it says what is missing and how to get it; the tests that need it are
# then skipped loudly, except under CI=true, where they would fail, so this exits 1 first. Safe to run again:
# what is already there is left alone (a server already listening is never restarted or reconfigured).
#
# ENSURE_SERVICES_DRY_RUN=1 prints what it would run instead of running it. For the script's own tests, the
# probes can be pointed elsewhere: ENSURE_SERVICES_UID (the user id), ENSURE_SERVICES_CHROMIUM (the path).
set -uo pipefail

DRY_RUN=${ENSURE_SERVICES_DRY_RUN:-0}
uid=${ENSURE_SERVICES_UID:-$(id -u)}
chromium=${ENSURE_SERVICES_CHROMIUM:-/usr/bin/chromium}
redis_url=${REDIS_URL:-redis://127.0.0.1:6379}
database_url=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}

say() { printf 'test:setup: %s\n' "$*" >&2; }
run() { # run <command...>: runs it, or prints it under ENSURE_SERVICES_DRY_RUN=1
  if [ "$DRY_RUN" = 1 ]; then say "would run: $*"; return 0; fi
  "$@"
}

# host and port of a URL (scheme://[user[:pass]@]host[:port][/...]), the port defaulting to $2.
host_of() { local rest=${1#*://}; rest=${rest%%/*}; rest=${rest##*@}; printf '%s' "${rest%:*}"; }
port_of() {
  local rest=${1#*://}; rest=${rest%%/*}; rest=${rest##*@}
  if [[ $rest == *:* ]]; then printf '%s' "${rest##*:}"; else printf '%s' "$2"; fi
}
is_local() { [[ $1 == 127.0.0.1 || $1 == localhost || $1 == ::1 || $1 == '[::1]' ]]; }
listening() { # listening <host> <port>: a TCP connect succeeds (bash's /dev/tcp, no client tools needed)
  local host=${1#[}; host=${host%]}
  if command -v timeout >/dev/null 2>&1; then
    timeout 3 bash -c ": >/dev/tcp/$host/$2" 2>/dev/null
  else
    (: >"/dev/tcp/$host/$2") 2>/dev/null
  fi
}
wait_for() { # wait_for <host> <port> <what>
  [ "$DRY_RUN" = 1 ] && return 0
  for _ in $(seq 1 30); do listening "$1" "$2" && return 0; sleep 1; done
  say "$3 did not start listening on $1:$2"; return 1
}

# shellcheck source=scale-services.sh
source "${BASH_SOURCE[0]%/*}/scale-services.sh"

redis_host=$(host_of "$redis_url"); redis_port=$(port_of "$redis_url" 6379)
pg_host=$(host_of "$database_url"); pg_port=$(port_of "$database_url" 5432)
pg_db=${database_url##*/}; pg_db=${pg_db%%\?*}; pg_db=${pg_db:-test}

redis_ok=0; pg_ok=0; chromium_ok=0; cluster_ok=0; pgbouncer_ok=0
listening "$redis_host" "$redis_port" && redis_ok=1
listening "$pg_host" "$pg_port" && pg_ok=1
[ -x "$chromium" ] && chromium_ok=1
cluster_formed && cluster_ok=1
listening "$pgbouncer_host" "$pgbouncer_port" && pgbouncer_ok=1

if [ "$redis_ok$pg_ok$chromium_ok$cluster_ok$pgbouncer_ok" = 11111 ]; then
  say "Redis ($redis_host:$redis_port), PostgreSQL ($pg_host:$pg_port), Chromium ($chromium), the Redis Cluster ($cluster_where) and PgBouncer ($pgbouncer_host:$pgbouncer_port) are there"
  exit 0
fi

can_install=0
[ "$uid" = 0 ] && command -v apt-get >/dev/null 2>&1 && can_install=1

if [ "$can_install" = 1 ]; then
  packages=()
  if { { [ "$redis_ok" = 0 ] && is_local "$redis_host"; } || { [ "$cluster_ok" = 0 ] && is_local "$cluster_host"; }; } \
    && ! command -v redis-server >/dev/null 2>&1; then
    packages+=(redis-server)
  fi
  fresh_postgres=0
  if [ "$pg_ok" = 0 ] && is_local "$pg_host" && ! command -v pg_ctlcluster >/dev/null 2>&1; then
    packages+=(postgresql); fresh_postgres=1
  fi
  [ "$chromium_ok" = 0 ] && packages+=(chromium)
  if [ "$pgbouncer_ok" = 0 ] && is_local "$pgbouncer_host" && ! command -v pgbouncer >/dev/null 2>&1; then
    packages+=(pgbouncer)
  fi
  if [ "${#packages[@]}" -gt 0 ]; then
    say "installing ${packages[*]} (Debian packages, as root)"
    run apt-get update -qq || say "apt-get update failed; trying the install anyway"
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null \
      || say "apt-get install ${packages[*]} failed"
  fi

  if [ "$redis_ok" = 0 ] && is_local "$redis_host"; then
    say "starting redis-server on 127.0.0.1:$redis_port (no persistence)"
    run mkdir -p /var/lib/redis /var/log/redis
    run redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/payhook-tests.log
    wait_for "$redis_host" "$redis_port" Redis && redis_ok=1
  fi

  if [ "$pg_ok" = 0 ] && is_local "$pg_host"; then
    cluster=$( (ls /etc/postgresql | sort -V | tail -n1) 2>/dev/null)
    if [ "$fresh_postgres" = 1 ]; then
      # Only a cluster this script just installed: the tests connect as postgres without a password.
      say "PostgreSQL was just installed: trusting local TCP connections (a test machine's setting)"
      hba="/etc/postgresql/${cluster:-<version>}/main/pg_hba.conf"
      run sed -i -e '1i host all all 127.0.0.1/32 trust' -e '1i host all all ::1/128 trust' "$hba"
    fi
    say "starting the PostgreSQL cluster ${cluster:-(the one just installed)}/main on port $pg_port"
    run pg_ctlcluster --skip-systemctl-redirect "${cluster:-<version>}" main start
    wait_for "$pg_host" "$pg_port" PostgreSQL && pg_ok=1
  fi
  if [ "$pg_ok" = 1 ] && is_local "$pg_host" && command -v psql >/dev/null 2>&1 && [ "$DRY_RUN" != 1 ]; then
    # As the postgres user over the local socket (peer authentication), whatever pg_hba.conf says about TCP.
    sql() { runuser -u postgres -- psql -p "$pg_port" -qAt -c "$1" 2>/dev/null; }
    [ "$(sql "select 1 from pg_database where datname = '$pg_db'")" = 1 ] \
      || sql "create database \"$pg_db\"" >/dev/null || say "could not create the database $pg_db"
  fi
  [ -x "$chromium" ] && chromium_ok=1

  if [ "$cluster_ok" = 0 ] && is_local "$cluster_host"; then
    start_redis_cluster && cluster_ok=1
  fi
  if [ "$pgbouncer_ok" = 0 ] && is_local "$pgbouncer_host" && [ "$pg_ok" = 1 ]; then
    start_pgbouncer && pgbouncer_ok=1
  fi
  [ "$DRY_RUN" = 1 ] && exit 0
fi

missing=()
[ "$redis_ok" = 0 ] && missing+=("Redis at $redis_host:$redis_port: apt-get install redis-server (or brew install redis), start it, or set REDIS_URL")
[ "$pg_ok" = 0 ] && missing+=("PostgreSQL at $pg_host:$pg_port: apt-get install postgresql (or brew install postgresql), database $pg_db reachable as in DATABASE_URL")
[ "$chromium_ok" = 0 ] && missing+=("Chromium at $chromium: apt-get install chromium")
[ "$cluster_ok" = 0 ] && missing+=("a Redis Cluster at $cluster_where: three masters and three replicas (redis-server --cluster-enabled yes, then redis-cli --cluster create … --cluster-replicas 1), or set REDIS_CLUSTER_URLS")
[ "$pgbouncer_ok" = 0 ] && missing+=("PgBouncer at $pgbouncer_host:$pgbouncer_port: apt-get install pgbouncer, pool_mode = transaction in front of PostgreSQL, or set PGBOUNCER_URL")
[ "${#missing[@]}" = 0 ] && exit 0

for line in "${missing[@]}"; do say "MISSING $line"; done
if [ "${CI:-}" = true ]; then
  say "CI=true: the tests that need these would fail. As root on Debian this script installs them."
  exit 1
fi
say "the tests that need these will be SKIPPED (with a notice); as root on Debian this script installs them"
exit 0
