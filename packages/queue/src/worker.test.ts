import {
  createWebhookHandler,
  parseNotification,
  type QueuedNotification,
  type WebhookError,
} from '@payhook/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { purchase } from '../../core/test/fixtures.ts';
import type { ConsumeOptions, JobAttempt, JobRunner, QueueEngine } from './engine.js';
import { createWorker, type WorkerOptions } from './worker.js';

/** An engine that hands the test its runner: `run(job)` is one attempt. */
function fakeEngine() {
  const calls: string[] = [];
  let runner: JobRunner | undefined;
  let consumed: ConsumeOptions | undefined;
  const engine: QueueEngine = {
    name: 'fake',
    enqueue: async () => 'queued',
    consume: async (run, options) => {
      runner = run;
      consumed = options;
      return { stop: async (graceMs) => void calls.push(`stop ${graceMs}`) };
    },
    dead: async () => [],
    replay: async () => 0,
    discard: async () => 0,
    waiting: async () => [],
    purge: async () => 0,
    close: async () => void calls.push('close'),
  };
  const run = (job: QueuedNotification, signal = new AbortController().signal) =>
    runner!(job, { number: 1, of: 1, signal });
  const runAttempt = (job: QueuedNotification, attempt: JobAttempt) => runner!(job, attempt);
  return { engine, calls, run, runAttempt, consumed: () => consumed };
}

const job = (overrides: Partial<QueuedNotification> = {}): QueuedNotification => ({
  key: 'k',
  data: purchase(),
  secretIndex: 0,
  ...overrides,
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** What a worker's failed attempt says, in a worker's words: the job's next attempt, not the service's redelivery. */
const HANDLER_FAILED =
  "[@payhook/queue] a handler failed (what it threw went to the webhook's onError and logger): the job's next attempt runs the handlers that have not succeeded; after the last attempt the job is dead.";

/** A promise the test settles. */
function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('createWorker', () => {
  it('runs a job through webhook.process with its context and secret, and completes it when handled', async () => {
    const { engine, run, consumed } = fakeEngine();
    const seen: unknown[] = [];
    const webhook = createWebhookHandler<{ jobKey: string | undefined }>({ secret: 's', logger: false }).on(
      'purchase',
      (payment, context, delivery) =>
        void seen.push([payment.payment_id, context?.jobKey, delivery.secretId]),
    );
    await createWorker(webhook, engine, {
      context: (queued) => ({ jobKey: queued.key }),
      stopOnSignals: false,
      logger: false,
    });
    expect(consumed()).toEqual({ concurrency: 8 });
    await run(job({ secretId: 'current' }));
    expect(seen).toEqual([[purchase().payment_id, 'k', 'current']]);
  });

  it('completes a handled, a duplicate and an ignored notification; fails the attempt with the WebhookError of a refusal', async () => {
    const { engine, run } = fakeEngine();
    let fail = true;
    const webhook = createWebhookHandler({ secret: 's', logger: false }).on('purchase', () => {
      if (fail) throw new Error('down');
    });
    await createWorker(webhook, engine, { stopOnSignals: false, logger: false });
    const failed = (await run(job()).catch((error: unknown) => error)) as WebhookError;
    expect({
      code: failed.code,
      message: failed.message,
      reason: (failed as { reason?: string }).reason,
    }).toEqual({
      code: 'handler.failed',
      message: HANDLER_FAILED,
      reason: undefined,
    });
    fail = false;
    await expect(run(job())).resolves.toBeUndefined();
    expect(await webhook.process(parseNotification(purchase()))).toBe('duplicate');
    await expect(run(job())).resolves.toBeUndefined();
    const refund = { ...purchase(), method: 'refund', operation_id: 'op-1' };
    expect(await webhook.process(parseNotification(refund))).toBe('ignored');
    await expect(run(job({ data: refund }))).resolves.toBeUndefined();
  });

  it('fails the attempt of a job whose data is not a notification', async () => {
    const { engine, run } = fakeEngine();
    await createWorker(createWebhookHandler({ secret: 's', logger: false }), engine, {
      stopOnSignals: false,
      logger: false,
    });
    const failed = (await run(job({ data: { method: 'purchase' } })).catch(
      (error: unknown) => error,
    )) as WebhookError;
    expect(failed.code).toBe('notification.invalid');
  });

  it("keeps the worker's words, never the text, of what the context function threw; the reason only by failureReason", async () => {
    const thrown = new Error('context: cannot connect postgres://admin:S3CRETPW@db/prod');
    const attempt = async (options: WorkerOptions) => {
      const { engine, run } = fakeEngine();
      await createWorker(
        createWebhookHandler({ secret: 's', logger: false }).onAny(() => {}),
        engine,
        {
          stopOnSignals: false,
          logger: false,
          context: () => {
            throw thrown;
          },
          ...options,
        },
      );
      return (await run(job()).catch((error: unknown) => error)) as {
        code?: string;
        reason?: string;
        message: string;
      };
    };
    const failed = await attempt({});
    expect([failed.code, failed.reason]).toEqual(['worker.failed', undefined]);
    expect(failed.message).not.toContain('S3CRETPW');
    expect((await attempt({ failureReason: () => 'database down' })).reason).toBe('database down');
  });

  it('stops on SIGTERM with graceMs, then closes the engine, and stops once however often it is asked', async () => {
    const { engine, calls } = fakeEngine();
    const info = vi.fn();
    const worker = await createWorker(createWebhookHandler({ secret: 's', logger: false }), engine, {
      graceMs: 1_234,
      logger: { info, error: vi.fn() },
    });
    expect(info).toHaveBeenCalledWith('[@payhook/queue] worker ready on fake (concurrency 8)');
    process.emit('SIGTERM');
    await vi.waitFor(() => expect(calls).toEqual(['stop 1234', 'close']));
    await worker.stop();
    expect(calls).toEqual(['stop 1234', 'close']);
    expect(process.listenerCount('SIGINT')).toBe(0);
  });

  it('on SIGTERM, once the engine is closed, calls onShutdown to close what else holds the process open (the store)', async () => {
    const { engine, calls } = fakeEngine();
    const error = vi.fn();
    await createWorker(createWebhookHandler({ secret: 's', logger: false }), engine, {
      graceMs: 0,
      logger: { info: vi.fn(), error },
      onShutdown: async () => {
        calls.push('store closed');
        throw new Error('the store was closed already');
      },
    });
    process.emit('SIGTERM');
    await vi.waitFor(() => expect(error).toHaveBeenCalled());
    expect(calls).toEqual(['stop 0', 'close', 'store closed']);
    expect(error).toHaveBeenCalledWith('[@payhook/queue] the worker did not stop cleanly', expect.any(Error));
    expect(process.listenerCount('SIGTERM')).toBe(0);
  });

  it('leaves signals alone with stopOnSignals: false', async () => {
    const { engine } = fakeEngine();
    const before = process.listenerCount('SIGTERM');
    const worker = await createWorker(createWebhookHandler({ secret: 's', logger: false }), engine, {
      stopOnSignals: false,
      logger: false,
    });
    expect(process.listenerCount('SIGTERM')).toBe(before);
    await worker.stop();
  });

  it('refuses a concurrency that is not a positive integer', async () => {
    const { engine } = fakeEngine();
    const webhook = createWebhookHandler({ secret: 's', logger: false });
    await expect(createWorker(webhook, engine, { concurrency: 0 })).rejects.toThrow(
      '[@payhook/queue] concurrency must be an integer from 1, not 0.',
    );
  });

  it('gives the engine no reason of what a handler threw unless failureReason returns one, and none when that function throws', async () => {
    const thrown = new Error('courier answered 502 for card 4111 1111 1111 1111');
    const failing = () =>
      createWebhookHandler({ secret: 's', logger: false }).on('purchase', () => {
        throw thrown;
      });
    const attempt = async (options: WorkerOptions) => {
      const { engine, run } = fakeEngine();
      await createWorker(failing(), engine, { stopOnSignals: false, logger: false, ...options });
      const failed = (await run(job()).catch((error: unknown) => error)) as {
        reason?: string;
        message: string;
      };
      return { reason: failed.reason, message: failed.message };
    };
    expect(await attempt({})).toEqual({ reason: undefined, message: HANDLER_FAILED });
    const seen: unknown[] = [];
    const reasoned = await attempt({
      failureReason: (error) => {
        seen.push(error);
        return 'courier\n  502';
      },
    });
    expect(seen).toEqual([thrown]);
    expect(reasoned).toEqual({ reason: 'courier\n  502', message: HANDLER_FAILED });
    expect(
      await attempt({
        failureReason: () => {
          throw new Error('the reason function failed');
        },
      }),
    ).toEqual({ reason: undefined, message: HANDLER_FAILED });
  });

  it('aborts a running handler’s delivery.signal when the engine hands its job back, and calls onShutdown only once that run settled', async () => {
    const { engine, run, calls } = fakeEngine();
    const entered = latch();
    const release = latch();
    const seen: string[] = [];
    const webhook = createWebhookHandler({ secret: 's', logger: false }).on(
      'purchase',
      async (_p, _c, delivery) => {
        entered.open();
        delivery.signal.addEventListener('abort', () =>
          seen.push(`aborted: ${String(delivery.signal.reason)}`),
        );
        await release.promise;
        seen.push('committed');
      },
    );
    await createWorker(webhook, engine, {
      graceMs: 0,
      logger: false,
      onShutdown: () => void calls.push('store closed'),
    });
    const handBack = new AbortController();
    const attempt = run(job(), handBack.signal);
    await entered.promise;
    process.emit('SIGTERM');
    await vi.waitFor(() => expect(calls).toEqual(['stop 0']));
    handBack.abort('handed back');
    expect(seen).toEqual(['aborted: handed back']);
    // The engine moved on (its attempt ended), the run did not: the store stays open under it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['stop 0']);
    release.open();
    await attempt;
    await vi.waitFor(() => expect(calls).toEqual(['stop 0', 'close', 'store closed']));
    expect(seen).toEqual(['aborted: handed back', 'committed']);
  });

  it("reads no attempt's signal for jobs whose handlers never read delivery.signal, and follows the one a handler reads", async () => {
    const { engine, runAttempt } = fakeEngine();
    // An engine's attempt whose signal is made when read: none should be, for the first three jobs.
    let reads = 0;
    const handBack = new AbortController();
    const attempt = (): JobAttempt => ({
      number: 1,
      of: 1,
      get signal() {
        reads++;
        return handBack.signal;
      },
    });
    const seen: string[] = [];
    const webhook = createWebhookHandler({ secret: 's', logger: false }).on(
      'purchase',
      async (payment, _c, delivery) => {
        if (payment.payment_id !== 'reads') return;
        delivery.signal.addEventListener('abort', () => seen.push(String(delivery.signal.reason)));
        handBack.abort('handed back');
      },
    );
    await createWorker(webhook, engine, { stopOnSignals: false, logger: false });
    for (const id of ['p-1', 'p-2', 'p-3']) {
      await runAttempt(job({ key: id, data: purchase({ payment_id: id }) }), attempt());
    }
    expect(reads).toBe(0);
    await runAttempt(job({ key: 'reads', data: purchase({ payment_id: 'reads' }) }), attempt());
    expect(reads).toBeGreaterThan(0);
    expect(seen).toEqual(['handed back']);
  });

  it('waits on SIGTERM for a run that went on past handlerTimeoutMs before onShutdown', async () => {
    const { engine, run, calls } = fakeEngine();
    const release = latch();
    const webhook = createWebhookHandler({ secret: 's', logger: false, handlerTimeoutMs: 20 }).on(
      'purchase',
      () => release.promise,
    );
    const worker = await createWorker(webhook, engine, {
      graceMs: 0,
      logger: false,
      onShutdown: () => void calls.push('store closed'),
    });
    const failed = (await run(job()).catch((error: unknown) => error)) as WebhookError;
    expect(failed.code).toBe('handler.timeout');
    process.emit('SIGTERM');
    await vi.waitFor(() => expect(calls).toEqual(['stop 0']));
    let settled = false;
    void worker.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ settled, calls }).toEqual({ settled: false, calls: ['stop 0'] });
    release.open();
    await vi.waitFor(() => expect(calls).toEqual(['stop 0', 'close', 'store closed']));
    expect(settled).toBe(true);
  });
});
