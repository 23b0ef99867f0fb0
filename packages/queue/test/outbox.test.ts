import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { migrate, PostgresInbox } from '@payhook/core/postgres';
import { Queue } from 'bullmq';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { purchase } from '../../../packages/core/test/fixtures.ts';
import { signedForm } from '../../../test/support/signed-form.ts';
import { DATABASE_URL, REDIS_URL } from '../../core/test/servers.ts';
import type { QueueEngine } from '../src/engine.ts';
import { createWorker, type QueueWorker } from '../src/worker.ts';
import { kit as bullmq } from './engines/bullmq.ts';
import type { EngineKit } from './engines/kit.ts';
import { kit as postgres } from './engines/postgres.ts';
import { QUEUE_SECRET } from './ledger.ts';
import { shopWebhook } from './outbox-shop.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./outbox-child.ts', import.meta.url));
const SCHEMA = `payhook_outbox_${process.pid}`;
const WAIT = { timeout: 30_000, interval: 50 };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Every job the engine holds for `queue`, in any state (waiting, running, done, dead). */
async function jobsOf(kit: EngineKit, queue: string): Promise<number> {
  if (kit.id === 'postgres') {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      const schema = process.env.PAYHOOK_TEST_QUEUE_SCHEMA!;
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.job WHERE name = $1`,
        [queue],
      );
      return rows[0]!.n;
    } catch (error) {
      // pg-boss has not created its tables yet: no job.
      if ((error as { code?: string }).code === '42P01') return 0;
      throw error;
    }
  }
  const jobs = new Queue(queue, { connection: { url: REDIS_URL }, prefix: 'payhook-test' });
  try {
    const counts = await jobs.getJobCounts();
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  } finally {
    await jobs.close();
  }
}

/**
 * Issue 35's shop: one webhook with an inline handler ("mark the order paid", in the inbox's transaction) and a
 * queued one (in a worker). On the PostgreSQL engine the job is written by the inbox's own transaction; on BullMQ
 * it is enqueued after the commit, at least once: a crash between the two leaves no job and no 200, so the
 * service's retry (whose inline part is then a duplicate) enqueues it.
 */
describe.each([
  [postgres, await postgres.reach()],
  [bullmq, (await bullmq.reach()) && (await postgres.reach())],
] as const)('inline and queued handlers on PostgresInbox with %s', (kit, up) => {
  const outbox = kit.id === 'postgres';
  const engines: QueueEngine[] = [];
  const workers: QueueWorker[] = [];
  const children: ChildProcess[] = [];
  let pool: pg.Pool;
  let inbox: PostgresInbox;
  let inboxTable: string;
  let orders: string;
  let name: string;

  async function setUp(): Promise<{ engine: QueueEngine; seen: string[] }> {
    name = `payhook-outbox-${kit.id}-${randomUUID()}`;
    pool ??= new pg.Pool({ connectionString: DATABASE_URL, max: 6 });
    await pool.query(
      `SELECT pg_advisory_xact_lock(hashtext('payhook test schema')); CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
    );
    const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
    orders = `${SCHEMA}.orders_${suffix}`;
    await pool.query(`CREATE TABLE ${orders} (payment_id text NOT NULL)`);
    inboxTable = `${SCHEMA}.inbox_${suffix}`;
    await migrate(pool, { table: inboxTable });
    inbox = new PostgresInbox({ pool, table: inboxTable });
    const engine = kit.makeEngine(name);
    engines.push(engine);
    // The worker is up before any delivery: it must never see a job before the inline handler's COMMIT.
    const seen: string[] = [];
    const worker = shopWebhook(inbox, undefined, pool, orders, seen);
    workers.push(await createWorker(worker, engine, { concurrency: 2, stopOnSignals: false, logger: false }));
    return { engine, seen };
  }

  const rows = async (paymentId: string) =>
    (await pool.query(`SELECT 1 FROM ${orders} WHERE payment_id = $1`, [paymentId])).rowCount;

  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
  });
  afterAll(async () => {
    if (!up) return;
    await pool?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await pool?.end();
    await kit.dispose();
  });

  it.skipIf(!up)(
    'answers handled+queued, and the queued handler sees the inline handler’s committed row',
    async () => {
      const { engine, seen } = await setUp();
      const web = shopWebhook(inbox, engine, pool, orders);
      const paymentId = randomUUID();
      const payment = purchase({ payment_id: paymentId, order_id: `ok-${randomUUID()}` });
      const body = signedForm(payment, QUEUE_SECRET);
      const answer = await web({ method: 'POST', headers: FORM, body }, undefined);
      expect(answer.body).toBe('{"ok":true,"outcome":"handled+queued"}');
      await vi.waitFor(() => expect(seen).toEqual([`${paymentId} 1`]), WAIT);
      expect((await web({ method: 'POST', headers: FORM, body }, undefined)).outcome).toBe('duplicate');
      expect(await rows(paymentId)).toBe(1);
      expect(await jobsOf(kit, name)).toBe(1);
    },
    60_000,
  );

  it.skipIf(!up)('leaves no job when the inline handler fails and its transaction rolls back', async () => {
    const { engine, seen } = await setUp();
    const web = shopWebhook(inbox, engine, pool, orders);
    const paymentId = randomUUID();
    const payment = purchase({ payment_id: paymentId, order_id: `fail-${randomUUID()}` });
    const answer = await web(
      { method: 'POST', headers: FORM, body: signedForm(payment, QUEUE_SECRET) },
      undefined,
    );
    expect(answer.status).toBe(500);
    expect(await rows(paymentId)).toBe(0);
    expect(await jobsOf(kit, name)).toBe(0);
    expect(seen).toEqual([]);
  });

  it.skipIf(!up)(
    outbox
      ? 'keeps the job of a web process killed -9 right after the commit: the transaction wrote it'
      : 'enqueues after the commit, at least once: a web process killed -9 between the two leaves no job and no 200, and the retry queues it',
    async () => {
      const { engine, seen } = await setUp();
      const paymentId = randomUUID();
      const payment = purchase({ payment_id: paymentId, order_id: `ok-${randomUUID()}` });
      const body = signedForm(payment, QUEUE_SECRET);
      const child = startChild({
        ENGINE: kit.id,
        QUEUE: name,
        INBOX: inboxTable,
        ORDERS: orders,
        BODY: body,
      });
      children.push(child.process);
      await child.said('committed');
      child.process.kill('SIGKILL');
      await child.exited;
      expect(await rows(paymentId)).toBe(1);
      if (outbox) {
        expect(await jobsOf(kit, name)).toBe(1);
        await vi.waitFor(() => expect(seen).toEqual([`${paymentId} 1`]), WAIT);
      } else {
        expect(await jobsOf(kit, name)).toBe(0);
      }
      // The service's retry, since no 200 came: the inline part is a duplicate; on BullMQ the job is queued now.
      const web = shopWebhook(inbox, engine, pool, orders);
      const retry = await web({ method: 'POST', headers: FORM, body }, undefined);
      expect(retry.outcome).toBe(outbox ? 'duplicate' : 'queued');
      await vi.waitFor(() => expect(seen).toEqual([`${paymentId} 1`]), WAIT);
      expect(await rows(paymentId)).toBe(1);
      expect(await jobsOf(kit, name)).toBe(1);
    },
    90_000,
  );
});

/** The child web process: resolves each line once it says it, and its exit. */
function startChild(env: Record<string, string>): {
  process: ChildProcess;
  said(line: string): Promise<void>;
  exited: Promise<unknown>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wait of waiting) if (out.split('\n').includes(wait.line)) wait.resolve();
  });
  return {
    process: child,
    exited,
    said: (line) =>
      new Promise<void>((resolve, reject) => {
        if (out.split('\n').includes(line)) return resolve();
        waiting.push({ line, resolve });
        void exited.then(() => {
          if (!out.split('\n').includes(line)) reject(new Error(`the child exited before saying ${line}`));
        });
      }),
  };
}
