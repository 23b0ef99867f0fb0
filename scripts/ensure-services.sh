#!/usr/bin/env bash
# Installs (Debian packages) and starts what the test suite talks to: Redis, PostgreSQL, and Chromium for the
# hosted-checkout browser test. Safe to run again: each step is skipped when already done.
set -uo pipefail

apt_updated=0
need() { # need <command> <package...>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then echo "ensure-services: $1 is missing and this is not root; install ${*:2}" >&2; return 1; fi
  if [ "$apt_updated" = 0 ]; then apt-get update -qq && apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${@:2}" >/dev/null
}

need redis-server redis-server
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi

need pg_ctlcluster postgresql
if ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
for _ in $(seq 1 30); do
  pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1 && redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break
  sleep 1
done
psql -h 127.0.0.1 -U postgres -tc "select 1 from pg_database where datname = 'test'" 2>/dev/null | grep -q 1 \
  || psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null 2>&1 || true

need chromium chromium || echo "ensure-services: chromium unavailable; the browser test will fail under CI" >&2
exit 0
