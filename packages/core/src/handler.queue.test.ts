import diagnostics_channel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '../test/deliveries.js';
import { formBody, post, purchase, refund, SECRET } from '../test/fixtures.js';
import { rankLedger } from '../test/ledger.js';
import { type DeliveryMessage, PAYHOOK_CHANNELS } from './diagnostics/messages.js';
import type { WebhookError } from './errors.js';
import { createWebhookHandler, type WebhookHandlerOptions } from './handler.js';
import { parseNotification } from './notification/parse.js';
import { notificationKey } from './protocol/key.js';
import type { NotificationQueue, QueuedNotification } from './protocol/queue.js';

/** A queue in memory: one job per key, `duplicate` for a key it holds, and what it was handed. */
class FakeQueue implements NotificationQueue {
  readonly jobs: QueuedNotification[] = [];
  readonly signals: AbortSignal[] = [];
  /** When set, `enqueue` waits on it before answering. */
  gate: Promise<void> | undefined;
  /** When set, `enqueue` rejects with it. */
  failure: Error | undefined;

  async enqueue(job: QueuedNotification, signal: AbortSignal): Promise<'queued' | 'duplicate'> {
    this.signals.push(signal);
    if (this.gate) await this.gate;
    if (this.failure) throw this.failure;
    if (this.jobs.some((held) => held.key === job.key)) return 'duplicate';
    this.jobs.push(job);
    return 'queued';
  }
}

function queued(options: Partial<WebhookHandlerOptions> = {}) {
  const queue = new FakeQueue();
  const ran: string[] = [];
  const errors: WebhookError[] = [];
  const webhook = createWebhookHandler({
    secret: SECRET,
    logger: false,
    queue,
    onError: (error) => errors.push(error),
    ...options,
  }).on('purchase', (payment) => void ran.push(payment.payment_id));
  return { queue, ran, errors, webhook };
}

const QUEUED = '{"ok":true,"outcome":"queued"}';

afterEach(() => {
  vi.useRealTimers();
});

describe('createWebhookHandler with a queue', () => {
  it('answers 200 queued only once the queue acknowledged the job, and runs no handler in the request', async () => {
    const { queue, ran, webhook } = queued();
    const gate = deferred();
    queue.gate = gate.promise;
    let answered = false;
    const answer = webhook(post(formBody(purchase())), undefined).then((result) => {
      answered = true;
      return result;
    });
    await vi.waitFor(() => expect(queue.signals).toHaveLength(1));
    expect(answered).toBe(false);
    gate.resolve();
    const result = await answer;
    expect(result).toMatchObject({ status: 200, outcome: 'queued', body: QUEUED });
    expect(result.notification?.payment_id).toBe(purchase().payment_id);
    expect(ran).toEqual([]);
    expect(queue.jobs).toHaveLength(1);
  });

  it('hands the job the key, the decoded notification and the secret position: no signature, no secret', async () => {
    const { queue, webhook } = queued({
      secret: [
        { id: 'next', secret: 'other' },
        { id: 'current', secret: SECRET },
      ],
    });
    const body = formBody(purchase());
    await webhook(post(body), undefined);
    const [job] = queue.jobs;
    expect(Object.keys(job!).sort()).toEqual(['data', 'key', 'secretId', 'secretIndex']);
    expect(job).toEqual({
      key: notificationKey(parseNotification(purchase())),
      data: purchase(),
      secretIndex: 1,
      secretId: 'current',
    });
    const held = JSON.stringify(job);
    expect(held).not.toContain(SECRET);
    expect(held).not.toContain(new URLSearchParams(body).get('signature'));
  });

  it('leaves secretId out when secrets are not named', async () => {
    const { queue, webhook } = queued();
    await webhook(post(formBody(purchase())), undefined);
    expect(Object.keys(queue.jobs[0]!).sort()).toEqual(['data', 'key', 'secretIndex']);
  });

  it('answers 200 duplicate when the queue holds the key already', async () => {
    const { queue, webhook } = queued();
    const body = formBody(purchase());
    expect((await webhook(post(body), undefined)).outcome).toBe('queued');
    const again = await webhook(post(body), undefined);
    expect(again).toMatchObject({
      status: 200,
      outcome: 'duplicate',
      body: '{"ok":true,"outcome":"duplicate"}',
    });
    expect(queue.jobs).toHaveLength(1);
  });

  it('answers 200 ignored and queues nothing when no handler takes the notification', async () => {
    const { queue, webhook } = queued();
    const result = await webhook(post(formBody(refund())), undefined);
    expect(result).toMatchObject({ status: 200, outcome: 'ignored' });
    expect(queue.signals).toHaveLength(0);
  });

  it('answers 503 queue.unavailable with Retry-After when the queue refuses the job, reported to onError', async () => {
    const { queue, webhook, errors } = queued();
    queue.failure = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const result = await webhook(post(formBody(purchase())), undefined);
    expect(result.status).toBe(503);
    expect(result.headers['retry-after']).toBe('1');
    expect(JSON.parse(result.body)).toEqual({
      ok: false,
      error: {
        code: 'queue.unavailable',
        message:
          "[@payhook/core] the queue refused the job; the notification was not accepted, so the service's retry is safe.",
      },
    });
    expect(errors.map((error) => error.code)).toEqual(['queue.unavailable']);
    expect(errors[0]!.cause).toBe(queue.failure);
  });

  it('answers 503 after storeTimeoutMs when the queue never answers, and aborts its signal', async () => {
    vi.useFakeTimers();
    const { queue, webhook } = queued({ storeTimeoutMs: 500 });
    queue.gate = new Promise(() => {});
    const answer = webhook(post(formBody(purchase())), undefined);
    await vi.waitFor(() => expect(queue.signals).toHaveLength(1));
    expect(queue.signals[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(500);
    const result = await answer;
    expect(result.status).toBe(503);
    expect(result.error?.code).toBe('queue.unavailable');
    expect(result.error?.message).toContain('did not acknowledge the job within 500 ms (storeTimeoutMs)');
    expect(queue.signals[0]!.aborted).toBe(true);
  });

  it('logs a refused job without the payload', async () => {
    const logged: unknown[][] = [];
    const logger = { warn: () => {}, error: (...args: unknown[]) => void logged.push(args) };
    const { queue, webhook } = queued({ logger });
    queue.failure = new Error('the queue is full');
    await webhook(post(formBody(purchase())), undefined);
    expect(logged).toHaveLength(1);
    const line = JSON.stringify(logged[0]!.map((part) => (part instanceof Error ? part.message : part)));
    expect(line).toContain('queue.unavailable');
    expect(line).not.toContain(String(purchase().cc_token));
    expect(line).not.toContain(String(purchase().payment_id));
  });

  it('traces a queued delivery on payhook:delivery with the outcome queued, and a refused one with its code', async () => {
    const { queue, webhook } = queued();
    const ended: DeliveryMessage[] = [];
    const tracing = diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.delivery);
    const ignore = () => {};
    const subscriber = {
      start: ignore,
      end: ignore,
      asyncStart: ignore,
      error: ignore,
      asyncEnd: (message: unknown) => void ended.push({ ...(message as DeliveryMessage) }),
    };
    tracing.subscribe(subscriber);
    try {
      await webhook(post(formBody(purchase())), undefined);
      queue.failure = new Error('down');
      await webhook(post(formBody(purchase({ transaction_id: 'another' }))), undefined);
    } finally {
      tracing.unsubscribe(subscriber);
    }
    expect(ended).toMatchObject([
      {
        via: 'request',
        event: 'purchase.success',
        outcome: 'queued',
        status: 200,
        key: notificationKey(parseNotification(purchase())),
        handlerCount: 1,
        errorCode: undefined,
      },
      { via: 'request', outcome: 'refused', status: 503, errorCode: 'queue.unavailable' },
    ]);
  });

  it('still runs the handlers in process(): what a worker calls never enqueues', async () => {
    const { queue, ran, webhook } = queued();
    const notification = parseNotification(purchase());
    expect(await webhook.process(notification, undefined, { secretIndex: 0 })).toBe('handled');
    expect(ran).toEqual([notification.payment_id]);
    expect(queue.signals).toHaveLength(0);
  });

  it('refuses a queue without enqueue when the handler is built', () => {
    expect(() =>
      createWebhookHandler({
        secret: SECRET,
        queue: {} as NotificationQueue,
      } as never),
    ).toThrow('queue must be a NotificationQueue (an object with enqueue');
  });
});

describe('the queue option with a ledger', () => {
  it('queues a notification no handler takes: the worker records it in the ledger', async () => {
    const queue = new FakeQueue();
    const { ledger, records } = rankLedger();
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, queue, ledger });
    expect((await webhook(post(formBody(purchase())), undefined)).outcome).toBe('queued');
    expect(records).toEqual([]);
    const worker = createWebhookHandler({ logger: false, ledger });
    expect(await worker.process(parseNotification(queue.jobs[0]!.data), undefined, { queued: true })).toBe(
      'handled',
    );
    expect(records).toEqual(['success']);
  });
});
