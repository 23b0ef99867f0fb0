import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// scripts/ensure-services.sh (`pnpm test:setup`) in its dry run: the probes point at ports nothing listens on, a
// Chromium path that does not exist and a PATH holding only a stub apt-get, as on a fresh Debian machine; the
// running Redis, PostgreSQL, Redis Cluster and PgBouncer of this machine are never touched. The cluster gets six
// ports (its nodes), the others one each.
const SCRIPT = resolve(fileURLToPath(new URL('../scripts/ensure-services.sh', import.meta.url)));
const work = mkdtempSync(join(tmpdir(), 'payhook-setup-'));
const servers: Server[] = [];
/** Redis, PostgreSQL, PgBouncer, then the cluster's six nodes. */
type Ports = [number, number, number, ...number[]];
let closed: Ports;
let open: Ports;

/** Whether a connect to `port` on loopback is refused now. */
function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

/**
 * `count` ports nothing listens on, below 1024: outside the range port-0 listens and outgoing connections draw from,
 * so no parallel test takes one between this choice and the script's probe (it could take a port a listener freed).
 */
async function closedPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let port = 1; ports.length < count && port < 1024; port++) if (await refused(port)) ports.push(port);
  if (ports.length < count) throw new Error(`fewer than ${count} closed ports below 1024 on 127.0.0.1`);
  return ports;
}

function listen(): Promise<Server> {
  return new Promise((done) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => done(server));
  });
}

beforeAll(async () => {
  writeFileSync(join(work, 'apt-get'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(work, 'apt-get'), 0o755);
  closed = (await closedPorts(9)) as Ports;
  for (let i = 0; i < 9; i++) servers.push(await listen());
  open = servers.map((s) => (s.address() as { port: number }).port) as Ports;
});

afterAll(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  rmSync(work, { recursive: true, force: true });
});

function setup(env: { uid: string; ports: Ports; chromium: string; ci?: boolean }) {
  const result = spawnSync('/bin/bash', [SCRIPT], {
    encoding: 'utf8',
    env: {
      PATH: work,
      ENSURE_SERVICES_DRY_RUN: '1',
      ENSURE_SERVICES_UID: env.uid,
      ENSURE_SERVICES_CHROMIUM: env.chromium,
      REDIS_URL: `redis://127.0.0.1:${env.ports[0]}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${env.ports[1]}/test`,
      PGBOUNCER_URL: `postgres://postgres@127.0.0.1:${env.ports[2]}/test`,
      REDIS_CLUSTER_URLS: env.ports
        .slice(3)
        .map((port) => `redis://127.0.0.1:${port}`)
        .join(','),
      ...(env.ci ? { CI: 'true' } : {}),
    },
  });
  return { status: result.status, stdout: result.stdout, lines: result.stderr.trimEnd().split('\n') };
}

describe('pnpm test:setup (scripts/ensure-services.sh)', () => {
  it('as root on a fresh Debian machine: installs Redis, PostgreSQL, Chromium and PgBouncer, starts the servers, the Redis Cluster and PgBouncer', () => {
    const [redis, pg, bouncer, ...nodes] = closed;
    const missing = join(work, 'no-chromium');
    expect(setup({ uid: '0', ports: closed, chromium: missing, ci: true })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        'test:setup: installing redis-server postgresql chromium pgbouncer (Debian packages, as root)',
        'test:setup: would run: apt-get update -qq',
        'test:setup: would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server postgresql chromium pgbouncer',
        `test:setup: starting redis-server on 127.0.0.1:${redis} (no persistence)`,
        'test:setup: would run: mkdir -p /var/lib/redis /var/log/redis',
        `test:setup: would run: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port ${redis} --save  --appendonly no --dir /var/lib/redis --logfile /var/log/redis/payhook-tests.log`,
        "test:setup: PostgreSQL was just installed: trusting local TCP connections (a test machine's setting)",
        'test:setup: would run: sed -i -e 1i host all all 127.0.0.1/32 trust -e 1i host all all ::1/128 trust /etc/postgresql/<version>/main/pg_hba.conf',
        `test:setup: starting the PostgreSQL cluster (the one just installed)/main on port ${pg}`,
        'test:setup: would run: pg_ctlcluster --skip-systemctl-redirect <version> main start',
        `test:setup: starting the Redis Cluster on 127.0.0.1:${nodes[0]}…${nodes[5]} (6 nodes, no persistence)`,
        'test:setup: would run: mkdir -p /var/lib/payhook-scale /var/log/redis',
        ...nodes.flatMap((port) => [
          `test:setup: would run: rm -f /var/lib/payhook-scale/nodes-${port}.conf`,
          `test:setup: would run: redis-server --daemonize yes --bind 127.0.0.1 --port ${port} --cluster-enabled yes --cluster-config-file nodes-${port}.conf --cluster-node-timeout 2000 --save  --appendonly no --dir /var/lib/payhook-scale --logfile /var/log/redis/payhook-cluster-${port}.log`,
        ]),
        `test:setup: would run: redis-cli --cluster create ${nodes.map((port) => `127.0.0.1:${port}`).join(' ')} --cluster-replicas 1 --cluster-yes`,
        `test:setup: starting PgBouncer on 127.0.0.1:${bouncer} (transaction mode) in front of 127.0.0.1:${pg}`,
        'test:setup: would run: mkdir -p /var/lib/payhook-scale/pgbouncer',
        `test:setup: would write /var/lib/payhook-scale/pgbouncer.ini (pool_mode = transaction, auth_type = trust, listen_port = ${bouncer})`,
        'test:setup: would run: chown -R postgres /var/lib/payhook-scale/pgbouncer',
        'test:setup: would run: runuser -u postgres -- pgbouncer -d /var/lib/payhook-scale/pgbouncer.ini',
      ],
    });
  });

  it('as another user outside CI: names what is missing and how to get it, and says the tests will skip', () => {
    const [redis, pg, bouncer, ...nodes] = closed;
    const missing = join(work, 'no-chromium');
    expect(setup({ uid: '1000', ports: closed, chromium: missing })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        `test:setup: MISSING Redis at 127.0.0.1:${redis}: apt-get install redis-server (or brew install redis), start it, or set REDIS_URL`,
        `test:setup: MISSING PostgreSQL at 127.0.0.1:${pg}: apt-get install postgresql (or brew install postgresql), database test reachable as in DATABASE_URL`,
        `test:setup: MISSING Chromium at ${missing}: apt-get install chromium`,
        `test:setup: MISSING a Redis Cluster at 127.0.0.1:${nodes[0]}…${nodes[5]}: three masters and three replicas (redis-server --cluster-enabled yes, then redis-cli --cluster create … --cluster-replicas 1), or set REDIS_CLUSTER_URLS`,
        `test:setup: MISSING PgBouncer at 127.0.0.1:${bouncer}: apt-get install pgbouncer, pool_mode = transaction in front of PostgreSQL, or set PGBOUNCER_URL`,
        'test:setup: the tests that need these will be SKIPPED (with a notice); as root on Debian this script installs them',
      ],
    });
  });

  it('as another user under CI=true: fails before the tests would', () => {
    const [redis] = closed;
    const result = setup({
      uid: '1000',
      ports: [redis, ...open.slice(1)] as Ports,
      chromium: '/bin/sh',
      ci: true,
    });
    expect(result).toEqual({
      status: 1,
      stdout: '',
      lines: [
        `test:setup: MISSING Redis at 127.0.0.1:${redis}: apt-get install redis-server (or brew install redis), start it, or set REDIS_URL`,
        'test:setup: CI=true: the tests that need these would fail. As root on Debian this script installs them.',
      ],
    });
  });

  it('as root where Redis and PostgreSQL run already: adds only the Redis Cluster and PgBouncer', () => {
    const [bouncer, ...nodes] = closed.slice(2);
    const result = setup({
      uid: '0',
      ports: [open[0], open[1], bouncer!, ...nodes],
      chromium: '/bin/sh',
      ci: true,
    });
    expect(result.status).toBe(0);
    expect(result.lines.slice(0, 3)).toEqual([
      'test:setup: installing redis-server pgbouncer (Debian packages, as root)',
      'test:setup: would run: apt-get update -qq',
      'test:setup: would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server pgbouncer',
    ]);
    expect(result.lines.filter((line) => line.includes('starting'))).toEqual([
      `test:setup: starting the Redis Cluster on 127.0.0.1:${nodes[0]}…${nodes[5]} (6 nodes, no persistence)`,
      `test:setup: starting PgBouncer on 127.0.0.1:${bouncer} (transaction mode) in front of 127.0.0.1:${open[1]}`,
    ]);
  });

  it('leaves a machine that has everything alone, even as root', () => {
    expect(setup({ uid: '0', ports: open, chromium: '/bin/sh', ci: true })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        `test:setup: Redis (127.0.0.1:${open[0]}), PostgreSQL (127.0.0.1:${open[1]}), Chromium (/bin/sh), the Redis Cluster (127.0.0.1:${open[3]}…${open[8]}) and PgBouncer (127.0.0.1:${open[2]}) are there`,
      ],
    });
  });
});
