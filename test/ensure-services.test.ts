import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../packages/core/test/servers.ts';

// scripts/ensure-services.sh (`pnpm test:setup`) in its dry run: the probes point at ports nothing listens on, a
// Chromium path that does not exist and a PATH holding only a stub apt-get, as on a fresh Debian machine; the
// running Redis and PostgreSQL of this machine are never touched.
const SCRIPT = resolve(fileURLToPath(new URL('../scripts/ensure-services.sh', import.meta.url)));
const work = mkdtempSync(join(tmpdir(), 'payhook-setup-'));
const servers: Server[] = [];
let closed: [number, number];
let open: [number, number];

function listen(): Promise<Server> {
  return new Promise((done) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => done(server));
  });
}

beforeAll(async () => {
  writeFileSync(join(work, 'apt-get'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(work, 'apt-get'), 0o755);
  closed = [await freePort(), await freePort()];
  for (let i = 0; i < 2; i++) servers.push(await listen());
  open = servers.map((s) => (s.address() as { port: number }).port) as [number, number];
});

afterAll(async () => {
  for (const server of servers) await new Promise((done) => server.close(done));
  rmSync(work, { recursive: true, force: true });
});

function setup(env: { uid: string; ports: [number, number]; chromium: string; ci?: boolean }) {
  const result = spawnSync('/bin/bash', [SCRIPT], {
    encoding: 'utf8',
    env: {
      PATH: work,
      ENSURE_SERVICES_DRY_RUN: '1',
      ENSURE_SERVICES_UID: env.uid,
      ENSURE_SERVICES_CHROMIUM: env.chromium,
      REDIS_URL: `redis://127.0.0.1:${env.ports[0]}`,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${env.ports[1]}/test`,
      ...(env.ci ? { CI: 'true' } : {}),
    },
  });
  return { status: result.status, stdout: result.stdout, lines: result.stderr.trimEnd().split('\n') };
}

describe('pnpm test:setup (scripts/ensure-services.sh)', () => {
  it('as root on a fresh Debian machine: installs Redis, PostgreSQL and Chromium and starts both servers', () => {
    const [redis, pg] = closed;
    const missing = join(work, 'no-chromium');
    expect(setup({ uid: '0', ports: closed, chromium: missing, ci: true })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        'test:setup: installing redis-server postgresql chromium (Debian packages, as root)',
        'test:setup: would run: apt-get update -qq',
        'test:setup: would run: env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server postgresql chromium',
        `test:setup: starting redis-server on 127.0.0.1:${redis} (no persistence)`,
        'test:setup: would run: mkdir -p /var/lib/redis /var/log/redis',
        `test:setup: would run: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port ${redis} --save  --appendonly no --dir /var/lib/redis --logfile /var/log/redis/payhook-tests.log`,
        "test:setup: PostgreSQL was just installed: trusting local TCP connections (a test machine's setting)",
        'test:setup: would run: sed -i -e 1i host all all 127.0.0.1/32 trust -e 1i host all all ::1/128 trust /etc/postgresql/<version>/main/pg_hba.conf',
        `test:setup: starting the PostgreSQL cluster (the one just installed)/main on port ${pg}`,
        'test:setup: would run: pg_ctlcluster --skip-systemctl-redirect <version> main start',
      ],
    });
  });

  it('as another user outside CI: names what is missing and how to get it, and says the tests will skip', () => {
    const [redis, pg] = closed;
    const missing = join(work, 'no-chromium');
    expect(setup({ uid: '1000', ports: closed, chromium: missing })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        `test:setup: MISSING Redis at 127.0.0.1:${redis}: apt-get install redis-server (or brew install redis), start it, or set REDIS_URL`,
        `test:setup: MISSING PostgreSQL at 127.0.0.1:${pg}: apt-get install postgresql (or brew install postgresql), database test reachable as in DATABASE_URL`,
        `test:setup: MISSING Chromium at ${missing}: apt-get install chromium`,
        'test:setup: the tests that need these will be SKIPPED (with a notice); as root on Debian this script installs them',
      ],
    });
  });

  it('as another user under CI=true: fails before the tests would', () => {
    const [redis] = closed;
    const result = setup({ uid: '1000', ports: [redis, open[1]], chromium: '/bin/sh', ci: true });
    expect(result).toEqual({
      status: 1,
      stdout: '',
      lines: [
        `test:setup: MISSING Redis at 127.0.0.1:${redis}: apt-get install redis-server (or brew install redis), start it, or set REDIS_URL`,
        'test:setup: CI=true: the tests that need these would fail. As root on Debian this script installs them.',
      ],
    });
  });

  it('leaves a machine that has everything alone, even as root', () => {
    expect(setup({ uid: '0', ports: open, chromium: '/bin/sh', ci: true })).toEqual({
      status: 0,
      stdout: '',
      lines: [
        `test:setup: Redis (127.0.0.1:${open[0]}), PostgreSQL (127.0.0.1:${open[1]}) and Chromium (/bin/sh) are there`,
      ],
    });
  });
});
