#!/usr/bin/env bash
# Checks `pnpm test:setup` (scripts/ensure-services.sh) on a fresh Debian machine without touching this one:
# a minimal Debian 12 (debootstrap --variant=minbase: no Redis, no PostgreSQL, no PgBouncer) in a chroot, run inside a network
# namespace of its own, so the servers it installs and starts listen on a loopback of their own and never meet
# the ones this machine may run. As root on Debian; needs debootstrap (apt-get install debootstrap) and unshare.
# The packages are downloaded before entering the namespace (it has no network), so the script's apt-get update
# fails there and its install runs from the cache. Chromium is left out (ENSURE_SERVICES_CHROMIUM points at a
# file that exists): it is a 100 MB download, installed by the same apt-get line. Takes 3-4 minutes.
set -euo pipefail
root=$(mktemp -d /tmp/payhook-fresh-debian-XXXXXX)
chmod 755 "$root" # the chroot's /: the postgres user must traverse it
cleanup() {
  mountpoint -q "$root/proc" && umount "$root/proc"
  rm -rf "$root"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$(dirname "$0")/ensure-services.sh" "$(dirname "$0")/scale-services.sh" "$root/root/"
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root bash -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install --download-only -y -qq \
  --no-install-recommends redis-server postgresql pgbouncer >/dev/null'

export root
export -f in_root
unshare -n bash -euo pipefail -c '
  ip link set lo up
  setup() { in_root CI=true ENSURE_SERVICES_CHROMIUM=/bin/sh bash /root/ensure-services.sh; }
  stop() {
    in_root redis-cli -h 127.0.0.1 shutdown nosave >/dev/null 2>&1 || true
    for port in 30001 30002 30003 30004 30005 30006; do
      in_root redis-cli -h 127.0.0.1 -p $port shutdown nosave >/dev/null 2>&1 || true
    done
    in_root bash -c "kill \$(cat /var/lib/payhook-scale/pgbouncer/pgbouncer.pid)" >/dev/null 2>&1 || true
    in_root bash -c "pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main stop" >/dev/null 2>&1 || true
  }
  trap stop EXIT
  in_root bash -c "for c in redis-server psql pg_ctlcluster pgbouncer; do ! command -v \$c >/dev/null || exit 1; done"
  echo "fresh-debian: no redis-server, psql, pg_ctlcluster or pgbouncer; running CI=true pnpm test:setup"
  setup 2>&1 >/dev/null | grep "^test:setup:"
  [ "$(in_root redis-cli -h 127.0.0.1 ping)" = PONG ]
  [ "$(in_root psql -h 127.0.0.1 -U postgres -d test -Atc "select current_database()")" = test ]
  echo "fresh-debian: Redis answers PONG; PostgreSQL serves database test to postgres over TCP without a password"
  in_root redis-cli -h 127.0.0.1 -p 30001 cluster info | grep -q "^cluster_state:ok"
  [ "$(in_root redis-cli -h 127.0.0.1 -p 30001 cluster nodes | grep -c " slave ")" = 3 ]
  echo "fresh-debian: the Redis Cluster on 30001-30006 is ok, three masters with a replica each"
  [ "$(in_root psql -h 127.0.0.1 -p 6432 -U postgres -d test -Atc "select current_database()")" = test ]
  [ "$(in_root psql -h 127.0.0.1 -p 6432 -U postgres -d pgbouncer -Atc "show config" | grep "^pool_mode|" | cut -d"|" -f2)" = transaction ]
  echo "fresh-debian: PgBouncer on 6432 serves database test in transaction mode"
  [ "$(setup 2>&1)" = "test:setup: Redis (127.0.0.1:6379), PostgreSQL (127.0.0.1:5432), Chromium (/bin/sh), the Redis Cluster (127.0.0.1:30001…30006) and PgBouncer (127.0.0.1:6432) are there" ]
  echo "fresh-debian: a second run leaves everything alone"
'
echo "fresh-debian: passed"
