import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, SECRET } from '../test/fixtures.js';
import { rankLedger } from '../test/ledger.js';
import { storeCases } from '../test/store-cases.js';
import { createWebhookHandler, type WebhookHandlerOptions } from './handler.js';
import { parseNotification } from './notification/parse.js';
import { boundKey, notificationKey } from './protocol/key.js';
import type { NotificationQueue, QueuedNotification } from './protocol/queue.js';
import type { TransactionalStore, TransactionResult } from './stores/contract.js';

/** A queue in memory that records, for each job, what had happened when it was handed over. */
class RecordingQueue implements NotificationQueue {
  readonly jobs: QueuedNotification[] = [];
  failure: Error | undefined;

  constructor(readonly log: string[]) {}

  async enqueue(job: QueuedNotification): Promise<'queued' | 'duplicate'> {
    this.log.push('enqueue');
    if (this.failure) throw this.failure;
    if (this.jobs.some((held) => held.key === job.key)) return 'duplicate';
    this.jobs.push(job);
    return 'queued';
  }
}

/** A queue that can also write its job with a transaction: into the fake inbox's pending writes. */
class OutboxQueue extends RecordingQueue {
  inTransactionFailure: Error | undefined;

  async enqueueInTransaction(tx: unknown, job: QueuedNotification): Promise<'queued' | 'duplicate'> {
    if (this.inTransactionFailure) throw this.inTransactionFailure;
    (tx as Tx).writes.push(() => void this.jobs.push(job));
    return 'queued';
  }
}

interface Tx {
  writes: Array<() => void>;
}

/** A transactional inbox in memory: the work's writes apply at its commit, and are dropped when it throws. */
function memoryInbox(log: string[]): TransactionalStore<Tx> & { committed: Set<string> } {
  const committed = new Set<string>();
  return {
    name: 'memory-inbox',
    committed,
    async transaction<T>(key: string, work: (tx: Tx) => Promise<T>): Promise<TransactionResult<T>> {
      if (committed.has(key)) return { status: 'duplicate' };
      const tx: Tx = { writes: [] };
      try {
        const value = await work(tx);
        for (const write of tx.writes) write();
        committed.add(key);
        log.push(`commit ${key}`);
        return { status: 'done', value };
      } catch (error) {
        log.push(`rollback ${key}`);
        throw error;
      }
    },
  };
}

function shop(options: Partial<WebhookHandlerOptions> & { queue?: NotificationQueue }, log: string[]) {
  return createWebhookHandler({ secret: SECRET, logger: false, ...options })
    .on(
      'purchase',
      (payment, _context, delivery) => {
        log.push(`inline ${delivery.key === undefined ? '-' : 'keyed'}`);
        if (payment.order_id.startsWith('fail-')) throw new Error('the order could not be marked paid');
      },
      { inline: true },
    )
    .on('purchase', (_payment, _context, delivery) => void log.push(`queued ${delivery.key}`));
}

const body = (orderId = 'o-1') => formBody(purchase({ order_id: orderId }));
const keyOf = (orderId = 'o-1') => notificationKey(parseNotification(purchase({ order_id: orderId })))!;

describe('inline and queued handlers in one webhook', () => {
  it('runs the inline handler in the request, enqueues the rest after its commit, and answers handled+queued', async () => {
    const log: string[] = [];
    const queue = new RecordingQueue(log);
    const webhook = shop({ queue }, log);
    const answer = await webhook(post(body()), undefined);
    expect(answer.body).toBe('{"ok":true,"outcome":"handled+queued"}');
    expect(log).toEqual(['inline keyed', 'enqueue']);
    expect(queue.jobs.map((job) => job.key)).toEqual([keyOf()]);
    // The copy: the inline part is a duplicate, and so is the job.
    expect((await webhook(post(body()), undefined)).outcome).toBe('duplicate');
  });

  it('enqueues nothing when the inline handler fails: 500, and the redelivery runs it again', async () => {
    const log: string[] = [];
    const queue = new RecordingQueue(log);
    const answer = await shop({ queue }, log)(post(body('fail-1')), undefined);
    expect(answer.status).toBe(500);
    expect(queue.jobs).toEqual([]);
    expect(log).toEqual(['inline keyed']);
  });

  it('answers 503 when the enqueue after the commit fails; the retry is a duplicate inline and queues the job', async () => {
    const log: string[] = [];
    const queue = new RecordingQueue(log);
    const webhook = shop({ queue }, log);
    queue.failure = new Error('redis is down');
    const refused = await webhook(post(body()), undefined);
    expect(refused.status).toBe(503);
    expect(refused.error?.code).toBe('queue.unavailable');
    queue.failure = undefined;
    const retry = await webhook(post(body()), undefined);
    expect(retry.outcome).toBe('queued');
    expect(log).toEqual(['inline keyed', 'enqueue', 'enqueue']);
    expect(queue.jobs).toHaveLength(1);
  });

  it('answers handled and enqueues nothing for a notification that reaches only inline handlers', async () => {
    const log: string[] = [];
    const queue = new RecordingQueue(log);
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, queue })
      .on('purchase', () => void log.push('inline'), { inline: true })
      .onAny(() => void log.push('queued'), { inline: false })
      .on('refund', () => void log.push('refund'));
    const answer = await webhook(post(body()), undefined);
    // onAny reaches it too: that one is queued.
    expect(answer.outcome).toBe('handled+queued');
    const inlineOnly = createWebhookHandler({ secret: SECRET, logger: false, queue }).on(
      'purchase',
      () => void log.push('only inline'),
      { inline: true },
    );
    expect((await inlineOnly(post(body('o-2')), undefined)).outcome).toBe('handled');
    expect(queue.jobs.map((job) => job.key)).toEqual([keyOf()]);
  });

  it('runs only the queued part in a worker (process with queued), under its own key, and both parts in process', async () => {
    const log: string[] = [];
    const worker = shop({}, log);
    const notification = parseNotification(purchase());
    expect(await worker.process(notification, undefined, { queued: true })).toBe('handled');
    expect(log).toEqual([`queued ${boundKey(`${keyOf()}#queued`)}`]);
    expect(await worker.process(notification, undefined, { queued: true })).toBe('duplicate');
    // A reconciler's process: the inline part runs, the queued one is a duplicate already.
    expect(await worker.process(notification)).toBe('handled');
    expect(await worker.process(notification)).toBe('duplicate');
    expect(log).toEqual([`queued ${boundKey(`${keyOf()}#queued`)}`, 'inline keyed']);
    const onlyInline = createWebhookHandler({ secret: SECRET, logger: false }).on('purchase', () => {}, {
      inline: true,
    });
    expect(await onlyInline.process(notification, undefined, { queued: true })).toBe('ignored');
  });

  it('runs every handler in the request, as two parts, without a queue', async () => {
    const log: string[] = [];
    const webhook = shop({}, log);
    expect((await webhook(post(body()), undefined)).outcome).toBe('handled');
    expect(log).toEqual(['inline keyed', `queued ${boundKey(`${keyOf()}#queued`)}`]);
  });
});

describe('inline and queued handlers with a transactional store and a queue that writes with it (outbox)', () => {
  it('writes the job in the inline handler’s transaction: committed with it', async () => {
    const log: string[] = [];
    const store = memoryInbox(log);
    const queue = new OutboxQueue(log);
    const answer = await shop({ store, queue }, log)(post(body()), undefined);
    expect(answer.outcome).toBe('handled+queued');
    expect(log).toEqual(['inline keyed', `commit ${keyOf()}`]);
    expect(queue.jobs.map((job) => job.key)).toEqual([keyOf()]);
  });

  it('leaves no job when the inline handler fails: the transaction rolled back', async () => {
    const log: string[] = [];
    const queue = new OutboxQueue(log);
    const answer = await shop({ store: memoryInbox(log), queue }, log)(post(body('fail-2')), undefined);
    expect(answer.status).toBe(500);
    expect(queue.jobs).toEqual([]);
    expect(log).toEqual(['inline keyed', `rollback ${keyOf('fail-2')}`]);
  });

  it('rolls the inline handler back when the job cannot be written: 503 queue.unavailable, nothing committed', async () => {
    const log: string[] = [];
    const store = memoryInbox(log);
    const queue = new OutboxQueue(log);
    queue.inTransactionFailure = new Error('the job table is missing');
    const webhook = shop({ store, queue }, log);
    const answer = await webhook(post(body()), undefined);
    expect(answer.status).toBe(503);
    expect(answer.error?.code).toBe('queue.unavailable');
    expect(store.committed.size).toBe(0);
    queue.inTransactionFailure = undefined;
    expect((await webhook(post(body()), undefined)).outcome).toBe('handled+queued');
    expect((await webhook(post(body()), undefined)).outcome).toBe('duplicate');
    expect(queue.jobs).toHaveLength(1);
  });

  it('enqueues after the commit when the queue cannot write with the transaction', async () => {
    const log: string[] = [];
    const queue = new RecordingQueue(log);
    const answer = await shop({ store: memoryInbox(log), queue }, log)(post(body()), undefined);
    expect(answer.outcome).toBe('handled+queued');
    expect(log).toEqual(['inline keyed', `commit ${keyOf()}`, 'enqueue']);
  });
});

const servers = await storeCases('inline');

// The promise of docs/queue.md on every store: the queued part is enqueued only once the inline part committed, and
// a copy that finds the inline part done but no job (an enqueue that failed, or a crash between the two) queues it.
describe.each(servers.cases)('inline and queued handlers on $name', (storeCase) => {
  it.skipIf(!storeCase.up)(
    'queues the job on the retry after a failed enqueue, never running the inline handler twice',
    async () => {
      const log: string[] = [];
      const queue = new RecordingQueue(log);
      const webhook = shop({ queue, store: storeCase.make() }, log);
      // The PostgreSQL cases share one table: a payment id of each case's own keeps their keys apart.
      const delivery = () => post(formBody(purchase({ payment_id: `pay-${storeCase.name}-${process.pid}` })));
      queue.failure = new Error('the engine is down');
      const refused = await webhook(delivery(), undefined);
      expect(refused.error?.code).toBe('queue.unavailable');
      queue.failure = undefined;
      expect((await webhook(delivery(), undefined)).outcome).toBe('queued');
      expect((await webhook(delivery(), undefined)).outcome).toBe('duplicate');
      expect(log.filter((line) => line.startsWith('inline'))).toEqual(['inline keyed']);
      expect(queue.jobs).toHaveLength(1);
    },
  );
});

describe('inline and queued handlers behind a ledger', () => {
  const pending = () => formBody(purchase({ order_id: 'o-1', status: 'pending', status_code: '2122' }));

  it.each([
    ['enqueued after the commit', false],
    ['written by the inbox transaction', true],
  ])('queues nothing for a stale notification (%s): the inline part answers stale', async (_name, outbox) => {
    const log: string[] = [];
    const queue = outbox ? new OutboxQueue(log) : new RecordingQueue(log);
    const { ledger, records } = rankLedger();
    const store = outbox ? memoryInbox(log) : undefined;
    const webhook = shop({ queue, ledger, ...(store ? { store } : {}) }, log);
    expect((await webhook(post(body()), undefined)).outcome).toBe('handled+queued');
    expect((await webhook(post(pending()), undefined)).outcome).toBe('stale');
    expect(records).toEqual(['success', 'pending']);
    // One job: the success's; the stale pending reached no inline handler and queued nothing.
    expect(queue.jobs.map((job) => job.key)).toEqual([keyOf()]);
    expect(log.filter((line) => line.startsWith('inline'))).toEqual(['inline keyed']);
  });
});
