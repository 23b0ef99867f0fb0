/**
 * `pnpm relay:e2e [--payments 1000]`: issue 48's first must-show on one machine. The fake payment service (what
 * `payhook serve` runs) creates payments whose `server_url` is a relay channel; the built `payhook-relay` journals
 * them in PostgreSQL; the built `payhook relay connect` forwards them to an Express app on PostgreSQL (the Express
 * example's middleware, with `express.raw` in front to hash the bytes it received). Checks that every webhook was
 * handled exactly once and that the SHA-256 of each body is the same at the fake's outbox (the bytes its transport
 * posted) and at the app (the bytes it read). Needs the packages built and DATABASE_URL (default: the local one).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { notificationKey } from '@payhook/core';
import { migrate, PostgresStore } from '@payhook/core/postgres';
import { webhookMiddleware } from '@payhook/express';
import { createRelayChannel } from '@payhook/relay/client';
import { startFakeServer, TEST_CARDS, type WebhookTransport } from '@payhook/testing/fake';
import express from 'express';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RELAY_BIN = join(ROOT, 'packages/relay/bin/payhook-relay.js');
const CLI = join(ROOT, 'packages/testing/dist/cli.js');
const SECRET = 'relay-e2e-webhook-secret';
const SIGNING_SECRET = 'relay-e2e-signing-secret-0123456789abcdef';
const ADMIN = 'relay-e2e-admin-token-0123456789';

/** What one run found. */
export interface EndToEnd {
  payments: number;
  /** SHA-256 of each body the fake's transport posted. */
  sent: string[];
  /** SHA-256 of each body the app read. */
  received: string[];
  /** How many times each notification key was handled. */
  handled: Map<string, number>;
  seconds: number;
}

function sha(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('base64url');
}

/** The fake's default transport (a form POST), recording the SHA-256 of the exact bytes it posts. */
function recordingTransport(sent: string[]): WebhookTransport {
  return async (message) => {
    const body = new URLSearchParams({ data: message.data, signature: message.signature }).toString();
    const response = await fetch(message.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const answer = { status: response.status, body: await response.text() };
    if (response.status === 200) sent.push(sha(body));
    return answer;
  };
}

async function child(args: string[], env: Record<string, string>, ready: string): Promise<ChildProcess> {
  const process_ = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((done, fail) => {
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) done();
    };
    process_.stdout!.on('data', look);
    process_.stderr!.on('data', look);
    process_.once('exit', (code) => fail(new Error(`${args[0]} exited ${code}: ${output}`)));
  });
  process_.removeAllListeners('exit');
  return process_;
}

/**
 * The Express app: `express.raw` keeps the bytes (hashed here), core's middleware reads them as it would the stream,
 * with the channel's key as its `relay` option: each forward's signed header is checked against those bytes (401
 * otherwise), and `allowedSenders` checks the sender it names, the fake's address as the relay saw it (loopback here,
 * as the client's is: the relay's client tests show the original sender deciding).
 */
async function startApp(
  pool: pg.Pool,
  table: string,
  key: string,
  received: string[],
  handled: Map<string, number>,
) {
  await migrate(pool, { table });
  const app = express();
  app.post(
    '/webhooks',
    express.raw({ type: () => true }),
    (req, _res, next) => {
      received.push(sha(req.body as Buffer));
      next();
    },
    webhookMiddleware({
      secret: SECRET,
      store: new PostgresStore({ pool, table }),
      logger: false,
      allowedSenders: ['127.0.0.1'],
      relay: { key },
    }).onAny((notification) => {
      const key = notificationKey(notification) ?? `unkeyed ${notification.payment_id}`;
      handled.set(key, (handled.get(key) ?? 0) + 1);
    }),
  );
  const server = createServer(app);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks` };
}

async function until(done: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms: ${what()}`);
    await new Promise((wait) => setTimeout(wait, 20));
  }
}

/** One run with `payments` payments through one channel, everything on loopback and PostgreSQL. */
export async function relayEndToEnd(options: {
  payments: number;
  databaseUrl: string;
  log?: (line: string) => void;
}) {
  const log = options.log ?? (() => {});
  const prefix = `payhook_relay_e2e_${process.pid}`;
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
  const work = mkdtempSync(join(tmpdir(), 'payhook-relay-e2e-'));
  const stops: Array<() => Promise<unknown> | unknown> = [];
  const result: EndToEnd = {
    payments: options.payments,
    sent: [],
    received: [],
    handled: new Map(),
    seconds: 0,
  };
  try {
    const portServer = createServer();
    await new Promise<void>((done) => portServer.listen(0, '127.0.0.1', done));
    const port = (portServer.address() as AddressInfo).port;
    await new Promise((done) => portServer.close(done));
    const relay = await child(
      [
        RELAY_BIN,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--journal',
        options.databaseUrl,
        '--table-prefix',
        prefix,
      ],
      { PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET, PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN },
      'listening on',
    );
    stops.push(() => relay.kill('SIGTERM'));
    const channel = await createRelayChannel({
      relay: `http://127.0.0.1:${port}`,
      adminToken: ADMIN,
      name: 'e2e',
    });
    const app = await startApp(pool, `${prefix}_inbox`, channel.key, result.received, result.handled);
    stops.push(() => new Promise((done) => app.server.close(done)));
    const client = await child(
      [
        CLI,
        'relay',
        'connect',
        channel.connectUrl,
        '--forward-to',
        app.url,
        '--cursor-file',
        join(work, 'cursor.json'),
      ],
      { PAYHOOK_RELAY_TOKEN: channel.token },
      'connected',
    );
    stops.push(() => client.kill('SIGTERM'));
    const fake = await startFakeServer({ secret: SECRET, transport: recordingTransport(result.sent) });
    stops.push(() => fake.close());
    log(
      `relay on :${port} (PostgreSQL journal), payhook relay connect → Express on PostgreSQL; ${options.payments} payments`,
    );
    const started = performance.now();
    for (let n = 1; n <= options.payments; n++) {
      fake.fake.createPayment({
        pos_id: fake.fake.project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 10 + (n % 100) / 100,
        currency: 'UAH',
        description: `relay e2e ${n}`,
        order_id: `relay-e2e-${process.pid}-${n}`,
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: channel.serverUrl,
      });
    }
    await fake.fake.idle();
    await until(
      () => result.received.length >= result.sent.length && result.sent.length >= options.payments,
      600_000,
      () => `sent ${result.sent.length}, received ${result.received.length}`,
    );
    result.seconds = (performance.now() - started) / 1000;
    return result;
  } finally {
    for (const stop of stops.reverse()) await stop();
    await pool.query(`DROP TABLE IF EXISTS "${prefix}_events", "${prefix}_channels", "${prefix}_inbox"`);
    await pool.end();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Whether a run kept the promise; the reasons when it did not. */
export function verdict(run: EndToEnd): string[] {
  const problems: string[] = [];
  const sent = [...run.sent].sort();
  const received = [...run.received].sort();
  if (sent.length !== run.payments)
    problems.push(`the fake's outbox sent ${sent.length} webhooks, not ${run.payments}`);
  if (JSON.stringify(sent) !== JSON.stringify(received)) {
    problems.push(`the SHA-256 of the bodies differ: ${sent.length} sent, ${received.length} received`);
  }
  const counts = [...run.handled.values()];
  if (run.handled.size !== run.payments)
    problems.push(`${run.handled.size} notifications handled, not ${run.payments}`);
  if (counts.some((count) => count !== 1)) problems.push('a notification was handled more than once');
  return problems;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { payments: { type: 'string', default: '1000' } } });
  const payments = Number(values.payments);
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const run = await relayEndToEnd({ payments, databaseUrl, log: (line) => console.log(line) });
  const problems = verdict(run);
  console.log(
    `${run.payments} payments in ${run.seconds.toFixed(1)} s: ${run.sent.length} webhooks sent, ${run.received.length} received, ${run.handled.size} handled once each; SHA-256 equal at the outbox and the app: ${problems.length === 0}`,
  );
  for (const problem of problems) console.error(`relay:e2e: ${problem}`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
