import diagnostics_channel from 'node:diagnostics_channel';
import type { Notification, QueuedNotification } from '@payhook/core';
import { createWebhookHandler, parseNotification } from '@payhook/core';
import { PAYHOOK_CHANNELS, type WatchMessage } from '@payhook/core/diagnostics';
import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../../core/test/fixtures.js';
import { createPaymentLedger } from '../ledger/ledger.js';
import type { ResendClient, ResendRequest } from '../reconcile/api-client.js';
import { ApiError } from '../reconcile/api-errors.js';
import { sendWatched } from '../reconcile/watched-create.js';
import { MemoryWatchStore } from './memory.js';
import { createPaymentWatch, type PaymentWatchOptions } from './watch.js';

const T = Date.parse('2026-11-25T09:00:00Z');
const MINUTE = 60_000;

/** A service that answers each order as `answers` says: a status for its record, `404`, or nothing (requested). */
function service(answers: Record<string, string | 404 | undefined>) {
  const asked: ResendRequest[] = [];
  const api: ResendClient = {
    async resend(request) {
      asked.push(request);
      const answer = answers[request.orderId];
      if (answer === 404) throw new ApiError('api.not_found', 'GET … answered 404', { status: 404 });
      if (answer === undefined) return { status: 200, record: undefined };
      const record = {
        payment_id: `pay-${request.orderId}`,
        order_id: request.orderId,
        pos_id: 'pos-1',
        mode: 'direct',
        method: request.operation ?? 'purchase',
        amount: 12.5,
        currency: 'XTS',
        status: answer,
        created_at: '2026-11-25 09:00:00',
      };
      return { status: 200, record };
    },
  };
  return { api, asked };
}

function watchOf(api: ResendClient, more: Partial<PaymentWatchOptions<undefined>> = {}) {
  let now = T;
  const processed: string[] = [];
  const store = new MemoryWatchStore();
  const logged: string[] = [];
  const webhook = {
    process: async (n: Notification) => {
      processed.push(`${n.order_id} ${n.status}`);
      return 'handled' as const;
    },
  };
  const watch = createPaymentWatch({
    api,
    webhook,
    store,
    now: () => now,
    requestsPerSecond: 1000,
    logger: { warn: (line: string) => logged.push(line) },
    ...more,
  });
  const advance = (ms: number) => {
    now += ms;
  };
  return { watch, store, processed, logged, advance };
}

const notification = (order_id: string, status: string, method = 'purchase') =>
  ({ order_id, status, method }) as unknown as Notification;

describe('createPaymentWatch', () => {
  it('settles on a final status of the operation watched, not on pending, init or another operation', async () => {
    const { watch, store } = watchOf(service({}).api);
    await watch.register({ orderId: 'o-1' });
    await watch.register({ orderId: 'o-2', operation: 'auth' });
    for (const status of ['pending', 'init', 'processing', ''])
      await watch.settle(notification('o-1', status));
    await watch.settle(notification('o-2', 'success', 'capture'));
    expect(store.size).toBe(2);
    await watch.settle(notification('o-1', 'failure'));
    await watch.settle(notification('o-2', 'success', 'auth'));
    expect(store.size).toBe(0);
  });

  it('settles from the ledger: a success the ledger found stale (after an early refund) still settles', async () => {
    const ledger = createPaymentLedger();
    const { watch, store } = watchOf(service({}).api, { ledger });
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, ledger }).onAny(watch.settle);
    await watch.register({ orderId: 'o-early' });
    await watch.register({ orderId: 'o-pending' });
    const base = { order_id: 'o-early', amount: 100 };
    const deliver = async (n: Record<string, unknown>) =>
      (await webhook(post(formBody(n)), undefined)).outcome;
    // The refund arrives first: its own method (`refund`) settles nothing, its transition to `paid` does.
    expect(await deliver({ ...purchase(base), method: 'refund', operation_id: 'r1', amount: 10 })).toBe(
      'handled',
    );
    expect(store.size).toBe(1);
    expect(await deliver(purchase(base))).toBe('stale');
    expect(await deliver(purchase({ order_id: 'o-pending', status: 'pending', status_code: '2122' }))).toBe(
      'handled',
    );
    expect(store.size).toBe(1);
  });

  it('settles an operation registered in capitals by its notification, which spells it in lower case', async () => {
    const { watch, store } = watchOf(service({}).api);
    await watch.register({ orderId: 'o-1', operation: 'AUTH' });
    await watch.settle(notification('o-1', 'success', 'auth'));
    expect(store.size).toBe(0);
  });

  it('is not settled by another project’s notification of the same order id', async () => {
    const { api } = service({});
    const { watch, store } = watchOf({ ...api, posId: 'POS-1' });
    await watch.register({ orderId: 'o-1' });
    await watch.settle({ ...notification('o-1', 'success'), pos_id: 'pos-2' } as Notification);
    expect(store.size).toBe(1);
    await watch.settle({ ...notification('o-1', 'success'), pos_id: 'pos-1' } as Notification);
    expect(store.size).toBe(0);
  });

  it('applies a final record, keeps a requested or pending one until maxTries, then reports it', async () => {
    const { api, asked } = service({ paid: 'success', asked: undefined, waiting: 'pending' });
    const { watch, processed, logged, advance } = watchOf(api, { maxTries: 2 });
    for (const orderId of ['paid', 'asked', 'waiting']) await watch.register({ orderId });
    advance(15 * MINUTE);
    const first = await watch.reconcileOverdue();
    expect(first.settled.map((p) => p.orderId)).toEqual(['paid']);
    expect(first.watching.map((p) => p.orderId).sort()).toEqual(['asked', 'waiting']);
    expect(processed.sort()).toEqual(['paid success', 'waiting pending']);
    advance(10 * MINUTE);
    expect(await watch.reconcileOverdue()).toEqual({ settled: [], watching: [], overdue: [] });
    advance(5 * MINUTE);
    const second = await watch.reconcileOverdue();
    expect(second.overdue.map((p) => [p.orderId, p.tries, p.lastResult]).sort()).toEqual([
      ['asked', 2, 'requested'],
      ['waiting', 2, 'pending'],
    ]);
    expect(logged).toHaveLength(2);
    expect(asked).toHaveLength(5);
  });

  it('uses a registration’s own deadline, and a second registration keeps the first', async () => {
    const { watch, advance } = watchOf(service({ o: 'success' }).api);
    await watch.register({ orderId: 'o', deadlineMs: MINUTE });
    await watch.register({ orderId: 'o', deadlineMs: 60 * MINUTE });
    advance(MINUTE);
    expect((await watch.reconcileOverdue()).settled.map((p) => p.orderId)).toEqual(['o']);
  });

  it('joins a run asked for while one is under way, and takes at most batchSize', async () => {
    const { watch, advance } = watchOf(service({ a: 'success', b: 'success', c: 'success' }).api, {
      batchSize: 2,
    });
    for (const orderId of ['a', 'b', 'c']) await watch.register({ orderId });
    advance(15 * MINUTE);
    const [one, two] = await Promise.all([watch.reconcileOverdue(), watch.reconcileOverdue()]);
    expect(one).toBe(two);
    expect(one.settled).toHaveLength(2);
    expect((await watch.reconcileOverdue()).settled.map((p) => p.orderId)).toEqual(['c']);
  });

  it('publishes each payment reported on payhook:watch; a throwing callback or logger does not stop the report', async () => {
    const messages: WatchMessage[] = [];
    const listen = (m: unknown) => messages.push(m as WatchMessage);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.watch, listen);
    try {
      const throwing = () => {
        throw new Error('down');
      };
      const { watch, advance } = watchOf(service({ x: 404, y: 404 }).api, {
        onOverdue: throwing,
        logger: { warn: throwing },
      });
      await watch.register({ orderId: 'x' });
      await watch.register({ orderId: 'y', operation: 'auth' });
      advance(15 * MINUTE);
      expect((await watch.reconcileOverdue()).overdue).toHaveLength(2);
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.watch, listen);
    }
    expect(messages).toEqual([
      { reason: 'unknown_order', operation: 'purchase', tries: 1 },
      { reason: 'unknown_order', operation: 'auth', tries: 1 },
    ]);
  });

  it('does not report a payment its re-sent webhook settled while the run went on', async () => {
    const settleFirst: ResendClient = {
      async resend(request) {
        await watch.settle(notification(request.orderId, 'success'));
        return { status: 200, record: undefined };
      },
    };
    const { watch, advance, logged } = watchOf(settleFirst, { maxTries: 1 });
    await watch.register({ orderId: 'o-1' });
    advance(15 * MINUTE);
    const report = await watch.reconcileOverdue();
    expect(report.overdue).toEqual([]);
    expect(report.settled.map((p) => p.orderId)).toEqual(['o-1']);
    expect(logged).toEqual([]);
  });

  it('reports the payments it stopped watching even when the store fails later in the run', async () => {
    const { api } = service({ x: 404, y: 404 });
    const store = new MemoryWatchStore();
    const remove = store.remove.bind(store);
    let removes = 0;
    store.remove = async (orderId, operation) => {
      if (++removes === 2) throw new Error('store down');
      return remove(orderId, operation);
    };
    const reported: string[] = [];
    const { watch, advance } = watchOf(api, { store, onOverdue: (p) => reported.push(p.orderId) });
    await watch.register({ orderId: 'x' });
    await watch.register({ orderId: 'y' });
    advance(15 * MINUTE);
    await expect(watch.reconcileOverdue()).rejects.toThrow('store down');
    expect(reported).toEqual(['x']);
    expect(store.size).toBe(1);
  });

  it('ignores an async onOverdue that rejects (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const listen = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listen);
    try {
      const { watch, advance } = watchOf(service({ x: 404 }).api, {
        onOverdue: async () => {
          throw new Error('alerting is down');
        },
      });
      await watch.register({ orderId: 'x' });
      advance(15 * MINUTE);
      expect((await watch.reconcileOverdue()).overdue).toHaveLength(1);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', listen);
    }
    expect(unhandled).toEqual([]);
  });

  it('refuses an order id or an operation it could not watch, before the store is called', async () => {
    const { watch, store } = watchOf(service({}).api);
    await expect(watch.register({ orderId: 'b', operation: 'purchase:a' })).rejects.toMatchObject({
      code: 'watch.operation_invalid',
    });
    await expect(watch.register({ orderId: 'o\u0000' })).rejects.toMatchObject({
      code: 'watch.order_id_invalid',
    });
    await expect(watch.register({ orderId: '..' })).rejects.toMatchObject({ code: 'watch.order_id_invalid' });
    expect(await watch.register({ orderId: 'a:b' })).toBe(true);
    // A notification no payment could be watched under settles nothing, and does not fail the handlers.
    await watch.settle(notification('b', 'success', 'purchase:a'));
    await watch.forget('b', 'purchase:a');
    expect(store.size).toBe(1);
  });

  it('checks its options', () => {
    const { api } = service({});
    expect(() => createPaymentWatch({ api: undefined as never })).toThrow(/api must be/);
    expect(() => createPaymentWatch({ api, store: {} as never })).toThrow(/store must be a WatchStore/);
    expect(() => createPaymentWatch({ api, maxTries: 0 })).toThrow(/maxTries/);
    expect(() => createPaymentWatch({ api, onOverdue: 'x' as never })).toThrow(/onOverdue/);
    const { watch } = watchOf(api);
    return expect(watch.register({ orderId: '' })).rejects.toThrow(/orderId must be a non-empty string/);
  });
});

describe('a watch over a webhook with a queue', () => {
  it('hands a final record to the queue as a delivery would: inline handlers here, the queued ones to a worker', async () => {
    const jobs: QueuedNotification[] = [];
    const queue = {
      enqueue: async (job: QueuedNotification) => {
        jobs.push(job);
        return 'queued' as const;
      },
    };
    const ran: string[] = [];
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, queue })
      .on('purchase.success', () => void ran.push('mark paid'), { inline: true })
      .on('purchase.success', () => void ran.push('e-mail'));
    const { watch, store, advance } = watchOf(service({ o: 'success' }).api, { webhook });
    await watch.register({ orderId: 'o' });
    advance(15 * MINUTE);
    const report = await watch.reconcileOverdue();
    expect(ran).toEqual(['mark paid']);
    expect(jobs.map((job) => job.data.order_id)).toEqual(['o']);
    expect(report.settled.map((p) => p.orderId)).toEqual(['o']);
    expect(store.size).toBe(0);
  });

  it("runs every handler in the process of a webhook without a queue (a worker's definition), as before", async () => {
    const ran: string[] = [];
    const webhook = createWebhookHandler({ logger: false }).on(
      'purchase.success',
      () => void ran.push('e-mail'),
    );
    const { watch, advance } = watchOf(service({ o: 'success' }).api, { webhook });
    await watch.register({ orderId: 'o' });
    advance(15 * MINUTE);
    await watch.reconcileOverdue();
    expect(ran).toEqual(['e-mail']);
  });
});

describe('watch.settle, the last handler', () => {
  it('settles only once the handlers before it succeeded: in the worker for a queued notification, not in the request', async () => {
    const jobs: QueuedNotification[] = [];
    const queue = {
      enqueue: async (job: QueuedNotification) => {
        jobs.push(job);
        return 'queued' as const;
      },
    };
    const store = new MemoryWatchStore();
    let failing = true;
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, queue }).on('purchase', () => {
      if (failing) throw new Error('the database is down');
    });
    const watch = createPaymentWatch({ api: service({}).api, store });
    webhook.onAny(watch.settle);
    await watch.register({ orderId: 'order-1001' });
    expect((await webhook(post(formBody(purchase())), undefined)).body).toBe(
      '{"ok":true,"outcome":"queued"}',
    );
    expect(store.size).toBe(1);
    // The worker: the merchant's handler fails first, so the payment stays watched; the retry settles it.
    const notification = parseNotification(jobs[0]!.data);
    await expect(webhook.process(notification)).rejects.toThrow();
    expect(store.size).toBe(1);
    failing = false;
    expect(await webhook.process(notification)).toBe('handled');
    expect(store.size).toBe(0);
  });
});

describe('sendWatched (the API client given a watch)', () => {
  const registry = () => {
    const calls: string[] = [];
    return {
      calls,
      watch: {
        register: async (r: { orderId: string; operation?: string }) => {
          const first = !calls.includes(`register ${r.orderId} ${r.operation}`);
          calls.push(`register ${r.orderId} ${r.operation}`);
          return first;
        },
        forget: async (orderId: string, operation?: string) =>
          void calls.push(`forget ${orderId} ${operation}`),
      },
    };
  };
  const refused = (status: number) => async () => {
    throw new ApiError('api.refused', 'refused', { status });
  };

  it('registers before the create is sent, with its method (a split payment is a purchase)', async () => {
    const { watch, calls } = registry();
    const send = async () => {
      calls.push('send');
      return 'created';
    };
    expect(await sendWatched(watch, { order_id: 'o-1', method: 'auth' }, false, send)).toBe('created');
    await sendWatched(watch, { order_id: 'o-2', method: 'auth' }, true, send);
    expect(calls).toEqual(['register o-1 auth', 'send', 'register o-2 purchase', 'send']);
  });

  it('forgets a create the service refused, keeps one that exists (409) or may exist (a timeout)', async () => {
    const { watch, calls } = registry();
    const timeout = async () => {
      throw new ApiError('api.timeout', 'no answer');
    };
    await expect(
      sendWatched(watch, { order_id: 'r', method: 'purchase' }, false, refused(400)),
    ).rejects.toThrow();
    await expect(
      sendWatched(watch, { order_id: 'e', method: 'purchase' }, false, refused(409)),
    ).rejects.toThrow();
    await expect(sendWatched(watch, { order_id: 't', method: 'purchase' }, false, timeout)).rejects.toThrow();
    expect(calls.filter((c) => c.startsWith('forget'))).toEqual(['forget r purchase']);
  });

  it('keeps the entry of an order watched already when a second create of it is refused', async () => {
    const { watch, calls } = registry();
    await sendWatched(watch, { order_id: 'd', method: 'purchase' }, false, async () => 'created');
    await expect(
      sendWatched(watch, { order_id: 'd', method: 'purchase' }, false, refused(400)),
    ).rejects.toThrow();
    expect(calls.filter((c) => c.startsWith('forget'))).toEqual([]);
  });

  it('sends nothing when the watch cannot record the payment', async () => {
    let sent = false;
    const watch = {
      register: async () => {
        throw new Error('store down');
      },
      forget: async () => undefined,
    };
    await expect(
      sendWatched(watch, { order_id: 'o' }, false, async () => {
        sent = true;
      }),
    ).rejects.toThrow('store down');
    expect(sent).toBe(false);
  });
});
