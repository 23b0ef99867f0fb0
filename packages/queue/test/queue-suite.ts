import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createWebhookHandler, type Delivery, type WebhookHandler, type WebhookResult } from '@payhook/core';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { purchase } from '../../../packages/core/test/fixtures.ts';
import { CuttableProxy, DATABASE_URL } from '../../../packages/core/test/servers.ts';
import { signedForm } from '../../../test/support/signed-form.ts';
import type { QueueEngine } from '../src/engine.ts';
import { createWorker, type QueueWorker } from '../src/worker.ts';
import type { EngineKit, KitEngineOptions } from './engines/kit.ts';
import { ledgerWebhook, QUEUE_SECRET, readLedger } from './ledger.ts';
import { openStore } from './stores.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./worker-child.ts', import.meta.url));
const RUN = `${process.pid}-${Date.now()}`;
const WAIT = { timeout: 20_000, interval: 25 };

/** A fresh purchase notification, its signed delivery body and its payment id. */
function delivery(overrides: Record<string, unknown> = {}) {
  const payment_id = randomUUID();
  const raw = purchase({ payment_id, transaction_id: randomUUID(), ...overrides });
  return { payment_id, body: signedForm(raw, QUEUE_SECRET) };
}

function post(webhook: WebhookHandler, body: string): Promise<WebhookResult> {
  return webhook(
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
    undefined,
  );
}

/** A promise the test settles: a gate a handler waits on. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * The queue suite every engine passes: the must-shows of issue 26 (an answer while the handler still runs,
 * retries that rerun only what failed, a worker killed mid-handler, replay of a dead job, the engine down at
 * enqueue, 200 concurrent copies) plus `dead`, `discard` and a graceful stop.
 */
export function describeQueueEngine(kit: EngineKit, up: boolean): void {
  describe.skipIf(!up)(`the queue on ${kit.title}`, () => {
    const engines: QueueEngine[] = [];
    const workers: QueueWorker[] = [];
    const closers: Array<() => Promise<void>> = [];
    let count = 0;
    const engine = (options?: KitEngineOptions, queue = `${RUN}-${++count}`) => {
      const made = kit.makeEngine(`payhook-test-${queue}`, options);
      engines.push(made);
      return made;
    };
    const work = async (webhook: WebhookHandler, on: QueueEngine, graceMs = 5_000) => {
      const worker = await createWorker(webhook, on, { stopOnSignals: false, logger: false, graceMs });
      workers.push(worker);
      return worker;
    };
    const dir = mkdtempSync(join(tmpdir(), 'payhook-queue-'));

    afterEach(async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.stop()));
      await Promise.all(engines.splice(0).map((made) => made.close()));
      await Promise.all(closers.splice(0).map((close) => close()));
    });
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true });
      await kit.dispose();
    });

    it('answers 200 queued while the handler is still blocked (a 20 s handler), then the worker finishes it', async () => {
      const queue = engine();
      const entered = latch();
      const release = latch();
      let finished = false;
      const handler = async () => {
        entered.open();
        // The 20 s of work, cut short by the test once it has seen the answer.
        await Promise.race([release.promise, new Promise((resolve) => setTimeout(resolve, 20_000))]);
        finished = true;
      };
      const options = { secret: QUEUE_SECRET, logger: false as const, handlerTimeoutMs: 60_000 };
      const web = createWebhookHandler({ ...options, queue }).on('purchase', handler);
      const worker = createWebhookHandler(options).on('purchase', handler);
      await work(worker, queue);
      const first = await post(web, delivery().body);
      expect(first).toMatchObject({ status: 200, outcome: 'queued', body: '{"ok":true,"outcome":"queued"}' });
      await entered.promise;
      // A second delivery is answered while the first handler is still blocked on its latch.
      expect((await post(web, delivery().body)).outcome).toBe('queued');
      expect(finished).toBe(false);
      release.open();
      await vi.waitFor(() => expect(finished).toBe(true), WAIT);
    });

    it('retries only the handler that failed: of two, the second fails 3 times then succeeds (first ran once, second 4 times)', async () => {
      const queue = engine({ attempts: 5 });
      const runs = { fulfil: 0, email: 0 };
      const build = (options: { queue?: QueueEngine }) =>
        createWebhookHandler({ secret: QUEUE_SECRET, logger: false, ...options })
          .on('purchase.success', () => void runs.fulfil++)
          .on('purchase', () => {
            runs.email++;
            if (runs.email <= 3) throw new Error('the mail server is down');
          });
      await work(build({}), queue);
      expect((await post(build({ queue }), delivery().body)).outcome).toBe('queued');
      await vi.waitFor(() => expect(runs.email).toBe(4), WAIT);
      expect(runs).toEqual({ fulfil: 1, email: 4 });
      expect(await queue.dead()).toEqual([]);
    });

    it('a worker killed with SIGKILL mid-handler leaves the job to a second worker: each handler effect recorded once', async () => {
      const queueName = `${RUN}-kill`;
      const queue = engine({ attempts: 10 }, queueName);
      const prefix = `payhook-test:queue:${RUN}:kill:`;
      const ledger = join(dir, 'kill.ledger');
      const child = startChild({
        ENGINE: kit.id,
        QUEUE: `payhook-test-${queueName}`,
        STORE_PREFIX: prefix,
        LEDGER: ledger,
        HANG: 'email',
      });
      closers.push(async () => void child.process.kill('SIGKILL'));
      await child.said('ready');
      const { store, close } = await kit.makeStore(prefix);
      closers.push(close);
      const web = ledgerWebhook(store, ledger);
      const notification = delivery();
      const answered = await post(
        createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on('purchase', () => {}),
        notification.body,
      );
      expect(answered.outcome).toBe('queued');
      await child.said('inside');
      expect(readLedger(ledger)).toEqual([`fulfil ${notification.payment_id}`]);
      child.process.kill('SIGKILL');
      await work(web, queue);
      await vi.waitFor(() => expect(readLedger(ledger)).toHaveLength(2), WAIT);
      expect(readLedger(ledger)).toEqual([
        `email ${notification.payment_id}`,
        `fulfil ${notification.payment_id}`,
      ]);
    });

    it('keeps a job that failed every attempt as dead with its code and message, and replays it after the fix (runs once)', async () => {
      const queue = engine({ attempts: 2 });
      const runs = { fulfil: 0, email: 0 };
      let fixed = false;
      const webhook = createWebhookHandler({ secret: QUEUE_SECRET, logger: false })
        .on('purchase.success', () => void runs.fulfil++)
        .on('purchase', () => {
          runs.email++;
          if (!fixed) throw new Error(`card ${purchase().cc_token} declined by the mailer`);
        });
      const notification = delivery();
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      expect((await post(web, notification.body)).outcome).toBe('queued');
      await work(webhook, queue);
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(1), WAIT);
      const [dead] = await queue.dead();
      expect(dead!.job.data.payment_id).toBe(notification.payment_id);
      expect(dead!.attempts).toBe(2);
      expect(dead!.error).toEqual({
        code: 'handler.failed',
        message:
          "[@payhook/queue] a handler failed (what it threw went to the webhook's onError and logger): the job's next attempt runs the handlers that have not succeeded; after the last attempt the job is dead.",
      });
      // Nothing the handler threw is stored unless the worker's failureReason opts in.
      expect(dead!.error.reason).toBeUndefined();
      expect(JSON.stringify(dead!.error)).not.toContain(String(purchase().cc_token));
      expect(runs).toEqual({ fulfil: 1, email: 2 });
      // A copy delivered while the job is dead is not queued again.
      expect((await post(web, notification.body)).outcome).toBe('duplicate');
      fixed = true;
      expect(await queue.replay({ ids: [dead!.id] })).toBe(1);
      await vi.waitFor(() => expect(runs.email).toBe(3), WAIT);
      expect(runs).toEqual({ fulfil: 1, email: 3 });
      expect(await queue.dead()).toEqual([]);
    });

    it('with PostgresInbox, retries and a replay run only the queued handler that failed: the others ran once, each committed with its completion', async () => {
      const queue = engine({ attempts: 2 });
      const { store, close } = await openStore('inbox', `inbox-retry-${RUN}-${count}`);
      closers.push(close);
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
      const ledger = `payhook_inbox_ledger_${process.pid}_${count}`;
      await pool.query(`CREATE TABLE ${ledger} (payment_id text, handler text)`);
      closers.push(async () => {
        await pool.query(`DROP TABLE IF EXISTS ${ledger}`);
        await pool.end();
      });
      const runs = { fulfil: 0, email: 0, courier: 0 };
      let fixed = false;
      const write = (handler: string) => async (payment: { payment_id: string }, _: unknown, d: Delivery) => {
        runs[handler as keyof typeof runs]++;
        const tx = d.transaction as pg.PoolClient;
        await tx.query(`INSERT INTO ${ledger} VALUES ($1, $2)`, [payment.payment_id, handler]);
      };
      const webhook = createWebhookHandler({ store, logger: false, leaseMs: 1_000, inFlightWaitMs: 500 })
        .on('purchase.success', write('fulfil'))
        .on('purchase', () => {
          runs.email++;
          if (!fixed) throw new Error('the mail server is down');
        })
        .on('purchase', write('courier'));
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const notification = delivery();
      expect((await post(web, notification.body)).outcome).toBe('queued');
      await work(webhook, queue);
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(1), WAIT);
      expect(runs).toEqual({ fulfil: 1, email: 2, courier: 0 });
      fixed = true;
      const [dead] = await queue.dead();
      expect(await queue.replay({ ids: [dead!.id] })).toBe(1);
      await vi.waitFor(() => expect(runs.courier).toBe(1), WAIT);
      await vi.waitFor(async () => expect(await queue.dead()).toEqual([]), WAIT);
      expect(runs).toEqual({ fulfil: 1, email: 3, courier: 1 });
      // The courier's row commits with its completion, just after it returned.
      const rows = async () => (await pool.query(`SELECT handler FROM ${ledger} ORDER BY handler`)).rows;
      await vi.waitFor(
        async () => expect((await rows()).map((r) => r.handler)).toEqual(['courier', 'fulfil']),
        WAIT,
      );
      // A copy delivered afterwards is a duplicate at the queue; processed again, at the store too.
      expect((await post(web, notification.body)).outcome).toBe('duplicate');
    });

    it('lists the waiting jobs, oldest first, and purges them by key or all at once', async () => {
      const queue = engine();
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const first = delivery();
      const second = delivery();
      expect((await post(web, first.body)).outcome).toBe('queued');
      expect((await post(web, second.body)).outcome).toBe('queued');
      const waiting = await queue.waiting();
      expect(waiting.map((job) => job.job.data.payment_id)).toEqual([first.payment_id, second.payment_id]);
      expect(waiting.map((job) => [job.id === job.job.key, job.attempts])).toEqual([
        [true, 0],
        [true, 0],
      ]);
      expect(waiting[0]!.queuedAt).toBeInstanceOf(Date);
      expect(await queue.waiting({ limit: 1 })).toHaveLength(1);
      expect(await queue.purge({ ids: [waiting[0]!.id, 'purchase:no-such:success'] })).toBe(1);
      expect((await queue.waiting()).map((job) => job.job.data.payment_id)).toEqual([second.payment_id]);
      expect(await queue.purge({ all: true })).toBe(1);
      expect(await queue.waiting()).toEqual([]);
      // Purged before it ran: a copy delivered afterwards is queued again.
      expect((await post(web, first.body)).outcome).toBe('queued');
      expect(await queue.dead()).toEqual([]);
    });

    it('answers 503 queue.unavailable while the engine is unreachable, and loses nothing once it is back', async () => {
      const proxy = await CuttableProxy.start(kit.server());
      closers.push(() => proxy.close());
      const queue = engine({}, `${RUN}-outage`);
      const cuttable = engine({ port: proxy.port }, `${RUN}-outage`);
      let runs = 0;
      const web = createWebhookHandler({
        secret: QUEUE_SECRET,
        logger: false,
        queue: cuttable,
        storeTimeoutMs: 500,
      }).on('purchase', () => {});
      await work(
        createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on('purchase', () => void runs++),
        queue,
      );
      expect((await post(web, delivery().body)).outcome).toBe('queued');
      await vi.waitFor(() => expect(runs).toBe(1), WAIT);
      proxy.cut();
      const notification = delivery();
      const refused = await post(web, notification.body);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.error?.code).toBe('queue.unavailable');
      proxy.restore();
      // The service's retry: queued now, or a duplicate of the job the refused enqueue added once the link was back.
      await vi.waitFor(async () => expect((await post(web, notification.body)).status).toBe(200), WAIT);
      await vi.waitFor(() => expect(runs).toBe(2), WAIT);
    });

    it('queues one job for 200 concurrent copies of one notification', async () => {
      const queue = engine();
      const notification = delivery();
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const results = await Promise.all(Array.from({ length: 200 }, () => post(web, notification.body)));
      const outcomes = results.map((result) => result.outcome);
      expect(outcomes.filter((outcome) => outcome === 'queued')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(199);
      // Without a store, only the queue keeps copies apart: the handler runs once, before a later notification.
      const ran: string[] = [];
      const webhook = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, store: false }).on(
        'purchase',
        (payment) => void ran.push(payment.payment_id),
      );
      const later = delivery();
      expect((await post(web, later.body)).outcome).toBe('queued');
      await work(webhook, queue);
      await vi.waitFor(() => expect(ran).toContain(later.payment_id), WAIT);
      expect(ran).toEqual([notification.payment_id, later.payment_id]);
    });

    it('lists dead jobs since a time and discards them by id or all at once', async () => {
      const queue = engine({ attempts: 1 });
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const failing = createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on('purchase', () => {
        throw new Error('down');
      });
      for (let i = 0; i < 3; i++) expect((await post(web, delivery().body)).outcome).toBe('queued');
      await work(failing, queue);
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(3), WAIT);
      const dead = await queue.dead();
      expect(await queue.dead({ limit: 2 })).toEqual(dead.slice(0, 2));
      expect(await queue.dead({ since: new Date(Date.now() + 60_000) })).toEqual([]);
      expect(dead.map((job) => job.error.code)).toEqual([
        'handler.failed',
        'handler.failed',
        'handler.failed',
      ]);
      expect(await queue.discard({ ids: [dead[0]!.id, 'no-such-job'] })).toBe(1);
      expect((await queue.dead()).map((job) => job.id)).toEqual([dead[1]!.id, dead[2]!.id]);
      expect(await queue.discard({ all: true })).toBe(2);
      expect(await queue.dead()).toEqual([]);
      // A discarded notification is gone from the queue: a copy delivered afterwards is queued again.
      expect((await post(web, signedForm(dead[0]!.job.data, QUEUE_SECRET))).outcome).toBe('queued');
    });

    /**
     * Three dead jobs: one before a `since` instant (its failure time plus 1 ms, on the engine's own clock) and two
     * after; `fixed` makes the handler succeed from then on. `runs` counts the runs of each payment.
     */
    async function deadAroundSince() {
      const queue = engine({ attempts: 1 });
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const state = { fixed: false, runs: new Map<string, number>() };
      const handler = createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on(
        'purchase',
        (payment) => {
          state.runs.set(payment.payment_id, (state.runs.get(payment.payment_id) ?? 0) + 1);
          if (!state.fixed) throw new Error('down');
        },
      );
      await work(handler, queue);
      const old = delivery();
      await post(web, old.body);
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(1), WAIT);
      const since = new Date((await queue.dead())[0]!.failedAt.getTime() + 1);
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(since.getTime()), WAIT);
      const recent = [delivery(), delivery()];
      for (const { body } of recent) await post(web, body);
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(3), WAIT);
      expect((await queue.dead({ since })).map((job) => job.job.data.payment_id).sort()).toEqual(
        recent.map((d) => d.payment_id).sort(),
      );
      return { queue, state, since, old, recent };
    }

    it('replays only the dead jobs that failed since a time ({ all: true, since }), each once after the fix', async () => {
      const { queue, state, since, old, recent } = await deadAroundSince();
      state.fixed = true;
      expect(await queue.replay({ all: true, since })).toBe(2);
      const ids = recent.map((d) => d.payment_id);
      await vi.waitFor(() => expect(ids.map((id) => state.runs.get(id))).toEqual([2, 2]), WAIT);
      expect((await queue.dead()).map((job) => job.job.data.payment_id)).toEqual([old.payment_id]);
      expect(state.runs.get(old.payment_id)).toBe(1);
      expect(await queue.replay({ all: true, since })).toBe(0);
    });

    it('discards only the dead jobs that failed since a time ({ all: true, since })', async () => {
      const { queue, since, old } = await deadAroundSince();
      expect(await queue.discard({ all: true, since })).toBe(2);
      expect((await queue.dead()).map((job) => job.job.data.payment_id)).toEqual([old.payment_id]);
      expect(await queue.discard({ all: true, since })).toBe(0);
    });

    it('keeps a job whose notification no longer parses as dead at once, without spending its other attempts', async () => {
      const queue = engine({ attempts: 5 });
      const { payment_id: _dropped, ...refused } = purchase({ transaction_id: randomUUID() });
      const key = `poison:${randomUUID()}`;
      expect(await queue.enqueue({ key, data: refused, secretIndex: 0 }, new AbortController().signal)).toBe(
        'queued',
      );
      let runs = 0;
      await work(
        createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on('purchase', () => void runs++),
        queue,
      );
      await vi.waitFor(async () => expect(await queue.dead()).toHaveLength(1), WAIT);
      const [dead] = await queue.dead();
      expect(dead).toMatchObject({
        job: { key },
        attempts: 1,
        error: {
          code: 'notification.invalid',
          message: '[@payhook/core] notification is missing or has malformed required fields: payment_id.',
        },
      });
      expect(runs).toBe(0);
    });

    it('stops gracefully: a running job finishes within graceMs, one still running after it is handed to another worker', async () => {
      // Stall detection at 30 s: the second job reaches the next worker within the wait only by being handed back.
      const queue = engine({ slowStalls: true });
      const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
        'purchase',
        () => {},
      );
      const entered = latch();
      const release = latch();
      const done: string[] = [];
      const slow = createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on(
        'purchase',
        async (payment) => {
          entered.open();
          await release.promise;
          done.push(payment.payment_id);
        },
      );
      const first = delivery();
      await post(web, first.body);
      const worker = await work(slow, queue);
      await entered.promise;
      const stopped = worker.stop();
      release.open();
      await stopped;
      expect(done).toEqual([first.payment_id]);

      const stuck = latch();
      const hanging = createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on(
        'purchase',
        async () => {
          stuck.open();
          await new Promise(() => {});
        },
      );
      const second = delivery();
      await post(web, second.body);
      const hangingWorker = await work(hanging, queue, 50);
      await stuck.promise;
      await hangingWorker.stop();
      const ran: string[] = [];
      await work(
        createWebhookHandler({ secret: QUEUE_SECRET, logger: false }).on(
          'purchase',
          (p) => void ran.push(p.payment_id),
        ),
        queue,
      );
      await vi.waitFor(() => expect(ran).toEqual([second.payment_id]), WAIT);
    });
  });
}

/** A child worker: resolves each line it says once it says it. */
function startChild(env: Record<string, string>): {
  process: ChildProcess;
  said(line: string): Promise<void>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wait of waiting) if (out.split('\n').includes(wait.line)) wait.resolve();
  });
  return {
    process: child,
    said: (line) =>
      new Promise<void>((resolve, reject) => {
        if (out.split('\n').includes(line)) return resolve();
        waiting.push({ line, resolve });
        child.once('exit', (code) =>
          reject(new Error(`the child worker exited (${code}) before saying ${line}`)),
        );
      }),
  };
}
