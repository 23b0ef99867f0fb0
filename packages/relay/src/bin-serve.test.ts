import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  clusterNodes,
  DATABASE_URL,
  REDIS_URL,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from '../../core/test/servers.ts';
import { ADMIN, delivery, FORM, SIGNING_SECRET } from '../test/kit.js';
import { type BinConfig, parseBin } from './bin-options.js';
import { type RunningRelay, startRelay } from './bin-serve.js';
import { createRelayChannel } from './client/admin.js';

const root = mkdtempSync(join(tmpdir(), 'payhook-relay-bin-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const postgres = await reachPostgres();
const redis = await reachRedis();
const cluster = await reachRedisCluster();

function config(args: string[]): BinConfig {
  const env = { PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET, PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN };
  return parseBin(['--host', '127.0.0.1', '--port', '0', ...args], env) as BinConfig;
}

/** Starts the bin's relay in this process, creates a channel and journals one delivery through it. */
async function roundTrip(args: string[], channel = `c${process.pid}-${Date.now() % 100_000}`) {
  const lines: string[] = [];
  const running: RunningRelay = await startRelay(config(args), (line) => lines.push(line));
  try {
    const created = await createRelayChannel({ relay: running.url, adminToken: ADMIN, name: channel });
    const answer = await fetch(created.serverUrl, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body: delivery(1),
    });
    return { lines, status: answer.status, body: await answer.json() };
  } finally {
    await running.close();
  }
}

describe("the bin's relay, started in process", () => {
  it('on memory and on a file journal: journals a delivery and logs the journal it uses', async () => {
    expect(await roundTrip(['--journal', 'memory'])).toMatchObject({ status: 200, body: { sequence: 1 } });
    const directory = join(root, 'file');
    const file = await roundTrip(['--journal', directory], 'alice');
    expect(file).toMatchObject({ status: 200, body: { sequence: 1 } });
    expect(file.lines[0]).toMatch(
      new RegExp(`^payhook-relay listening on http://127\\.0\\.0\\.1:\\d+ \\(journal: file ${directory}\\)$`),
    );
  });

  it.skipIf(!postgres)('on a PostgreSQL journal', async () => {
    const prefix = `payhook_relay_b${process.pid}`;
    const run = await roundTrip(['--journal', DATABASE_URL, '--table-prefix', prefix]);
    expect(run).toMatchObject({ status: 200, lines: [expect.stringContaining('(journal: postgres)')] });
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({ connectionString: DATABASE_URL });
    await pool.query(`DROP TABLE IF EXISTS "${prefix}_events", "${prefix}_channels"`);
    await pool.end();
  });

  it.skipIf(!redis)('on a Redis journal', async () => {
    const channel = `bin-${process.pid}`;
    const run = await roundTrip(['--journal', REDIS_URL], channel);
    expect(run).toMatchObject({ status: 200, lines: [expect.stringContaining('(journal: redis)')] });
    // The bin's default prefix on the shared Redis: only this channel is removed.
    const { Redis } = await import('ioredis');
    const client = new Redis(REDIS_URL);
    const record = JSON.parse((await client.hget('{payhook-relay}:channels', channel))!) as {
      tokenHash: string;
    };
    await client.hdel('{payhook-relay}:tokens', record.tokenHash);
    await client.hdel('{payhook-relay}:channels', channel);
    await client.del(`{payhook-relay}:ch:${channel}:seq`, `{payhook-relay}:ch:${channel}:events`);
    client.disconnect();
  });

  it.skipIf(!cluster)('on a Redis Cluster journal (redis+cluster://, every node named)', async () => {
    const channel = `bin-cluster-${process.pid}`;
    const nodes = clusterNodes().map(({ host, port }) => `${host}:${port}`);
    const run = await roundTrip(['--journal', `redis+cluster://${nodes.join(',')}`], channel);
    expect(run).toMatchObject({
      status: 200,
      body: { sequence: 1 },
      lines: [expect.stringContaining('(journal: redis cluster)')],
    });
    const { Cluster } = await import('ioredis');
    const client = new Cluster(clusterNodes());
    const record = JSON.parse((await client.hget('{payhook-relay}:channels', channel))!) as {
      tokenHash: string;
    };
    await client.hdel('{payhook-relay}:tokens', record.tokenHash);
    await client.hdel('{payhook-relay}:channels', channel);
    await client.del(`{payhook-relay}:ch:${channel}:seq`, `{payhook-relay}:ch:${channel}:events`);
    client.disconnect();
  });

  it('says when no channel can be created (no admin token)', async () => {
    const lines: string[] = [];
    const env = { PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET };
    const running = await startRelay(
      parseBin(['--host', '127.0.0.1', '--port', '0', '--journal', 'memory'], env) as BinConfig,
      (line) => lines.push(line),
    );
    await running.close();
    expect(lines[1]).toBe('payhook-relay: no PAYHOOK_RELAY_ADMIN_TOKEN, so no channel can be created');
  });

  it('serves HTTPS with --tls-cert and --tls-key', async () => {
    const cert = join(root, 'cert.pem');
    const key = join(root, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const running = await startRelay(
      config(['--journal', 'memory', '--tls-cert', cert, '--tls-key', key]),
      () => {},
    );
    try {
      expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const status = await new Promise<number>((resolve, reject) => {
        request(`${running.url}/health`, { ca: readFileSync(cert) }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(status).toBe(200);
    } finally {
      await running.close();
    }
  });
});
