import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, freePort, REDIS_URL, reachPostgres, reachRedis } from '../../core/test/servers.ts';
import { createRelayChannel } from '../src/client/admin.js';
import { connectRelay } from '../src/client/connect.js';
import { fileCursor } from '../src/client/cursor.js';
import { closing, startApp } from './app.js';
import { ADMIN, delivery, FORM, SIGNING_SECRET } from './kit.js';

// The relay as it runs in production (the built bin, a child process) killed with SIGKILL mid-stream and started
// again on the same journal: the client resumes from its cursor and the app gets every delivery once, in order.

const BIN = join(import.meta.dirname, '..', 'bin', 'payhook-relay.js');
if (!existsSync(join(import.meta.dirname, '..', 'dist', 'bin.js'))) {
  throw new Error(
    'packages/relay/dist is missing: run pnpm build before these tests (they start the built bin).',
  );
}
const root = mkdtempSync(join(tmpdir(), 'payhook-relay-restart-'));
const postgres = await reachPostgres();
const redis = await reachRedis();
const redisChannel = `killed-${process.pid}`;
const prefix = `payhook_relay_k${process.pid}`;

afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  if (redis) {
    // The bin's default prefix on the shared Redis: only this run's channel is removed.
    const client = new Redis(REDIS_URL);
    const record = await client.hget('{payhook-relay}:channels', redisChannel);
    if (record)
      await client.hdel('{payhook-relay}:tokens', (JSON.parse(record) as { tokenHash: string }).tokenHash);
    await client.hdel('{payhook-relay}:channels', redisChannel);
    await client.del(`{payhook-relay}:ch:${redisChannel}:seq`, `{payhook-relay}:ch:${redisChannel}:events`);
    client.disconnect();
  }
  if (!postgres) return;
  const pool = new pg.Pool({ connectionString: DATABASE_URL });
  await pool.query(`DROP TABLE IF EXISTS "${prefix}_events", "${prefix}_channels"`);
  await pool.end();
});

/** Starts the bin on `port` with `journal` and resolves once it listens. */
async function startRelay(port: number, journal: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, '--port', String(port), '--host', '127.0.0.1', ...journal], {
    env: { ...process.env, PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET, PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`payhook-relay exited ${code}: ${output}`)));
  });
  child.removeAllListeners('exit');
  closing.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Posts a delivery until the relay answers 200, as the service redelivers one not answered 200. */
async function deliverUntilJournaled(url: string, body: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': FORM }, body });
      if (response.status === 200) return attempt;
      await response.body?.cancel();
    } catch {
      // The relay is down: the service tries again later.
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function killedMidStream(journal: string[], name: string): Promise<void> {
  const port = await freePort();
  let relay = await startRelay(port, journal);
  const base = `http://127.0.0.1:${port}`;
  const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name });
  // The relay saw each delivery come from loopback: the app's allowedSenders takes that original sender.
  const app = await startApp(created.key, 10, ['127.0.0.1']);
  const stop = new AbortController();
  const client = connectRelay({
    url: created.connectUrl,
    token: created.token,
    forwardTo: app.url,
    cursor: fileCursor(join(mkdtempSync(join(root, 'cursor-')), 'c.json')),
    reconnect: { initialMs: 20, maxMs: 200 },
    maxReconnects: 200,
    signal: stop.signal,
  });
  closing.push(async () => {
    stop.abort();
    await client.catch(() => {});
  });
  for (let n = 1; n <= 60; n++) await deliverUntilJournaled(created.serverUrl, delivery(n));
  // Mid-stream: the app (10 ms a delivery) is still behind what the relay journaled.
  expect(app.received.length).toBeLessThan(60);
  relay.kill('SIGKILL');
  await new Promise((resolve) => relay.once('exit', resolve));
  const pending = (async () => {
    for (let n = 61; n <= 100; n++) await deliverUntilJournaled(created.serverUrl, delivery(n));
  })();
  relay = await startRelay(port, journal);
  await pending;
  await app.waitFor(100, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  stop.abort();
  await client;
  expect(app.received.map((r) => r.sequence)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  expect(app.received.every((r) => r.sha256 === r.signedSha256)).toBe(true);
  expect(app.handled.size).toBe(100);
  expect([...app.handled.values()].every((count) => count === 1)).toBe(true);
}

describe('payhook-relay killed with SIGKILL mid-stream and restarted', () => {
  it('on its file journal: the client resumes from its cursor, every delivery once, in order', async () => {
    await killedMidStream(['--journal', mkdtempSync(join(root, 'journal-'))], 'alice');
  }, 60_000);

  it.skipIf(!postgres)(
    'on its PostgreSQL journal: the client resumes from its cursor, every delivery once, in order',
    async () => {
      await killedMidStream(['--journal', DATABASE_URL, '--table-prefix', prefix], 'alice');
    },
    60_000,
  );

  it.skipIf(!redis)(
    'on its Redis journal: the client resumes from its cursor, every delivery once, in order',
    async () => {
      await killedMidStream(['--journal', REDIS_URL], redisChannel);
    },
    60_000,
  );
});
