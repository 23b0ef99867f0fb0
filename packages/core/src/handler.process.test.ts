import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import type pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { STORE_SECRET } from '../test/bodies.js';
import { base, DUPLICATE, formRequest, HANDLED } from '../test/deliveries.js';
import { formBody, purchase } from '../test/fixtures.js';
import { rankLedger } from '../test/ledger.js';
import { storeCases } from '../test/store-cases.js';
import { HandlerError } from './errors.js';
import { createWebhookHandler } from './handler.js';
import { parseNotification } from './notification/parse.js';
import type { Delivery } from './protocol/delivery.js';
import { MemoryStore } from './stores/memory.js';
import type { PostgresInbox } from './stores/postgres.js';

const servers = await storeCases('process');

/** A recurring charge as a fetched record and as a signed delivery of the same notification. */
function charge() {
  const raw = purchase({
    payment_id: randomUUID(),
    transaction_id: randomUUID(),
    recurring: { id: 'sub-1', status: 'active' },
  });
  return { notification: parseNotification(raw), body: formBody(raw, STORE_SECRET) };
}

describe.each(servers.cases)('webhook.process with $name', (storeCase) => {
  describe.skipIf(!storeCase.up)('', () => {
    it('runs the handlers once outside a request: the same notification delivered afterwards is a duplicate, and the other way round', async () => {
      const store = storeCase.make();
      const seen: string[] = [];
      const webhook = createWebhookHandler(base(store)).on('purchase', (n) => void seen.push(n.payment_id));
      const fetched = charge();
      expect(await webhook.process(fetched.notification)).toBe('handled');
      expect((await webhook(formRequest(fetched.body), undefined)).body).toBe(DUPLICATE);
      const delivered = charge();
      expect((await webhook(formRequest(delivered.body), undefined)).body).toBe(HANDLED);
      expect(await webhook.process(delivered.notification)).toBe('duplicate');
      expect(seen).toEqual([fetched.notification.payment_id, delivered.notification.payment_id]);
    });

    it("keeps no listener on the caller's signal once its runs settled, though one signal served 50 of them", async () => {
      const caller = new AbortController();
      const warnings: string[] = [];
      // Only Node's listener warning: a store behind PgBouncer may warn of its named statements meanwhile.
      const onWarning = (warning: Error) => {
        if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning.message);
      };
      process.on('warning', onWarning);
      // A handler that reads delivery.signal and returns at once, and one that awaits: the two ways a run ends.
      const store = storeCase.make();
      const webhooks = [
        createWebhookHandler(base(store)).onAny((_n, _c, delivery) => void delivery.signal.aborted),
        createWebhookHandler(base(store)).onAny(async (_n, _c, delivery) => {
          await Promise.resolve(delivery.signal.aborted);
        }),
      ];
      try {
        for (let i = 0; i < 25; i++) {
          for (const webhook of webhooks) {
            const notification = parseNotification(purchase({ payment_id: randomUUID() }));
            const outcome = await webhook.process(notification, undefined, { signal: caller.signal });
            expect(outcome).toBe('handled');
          }
        }
        await new Promise((resolve) => setImmediate(resolve));
        expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
        expect(warnings).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });

    it("reads the caller's signal only once a handler reads delivery.signal, then follows it", async () => {
      const store = storeCase.make();
      const caller = new AbortController();
      let reads = 0;
      // A queue worker's options: the signal made when first read.
      const options = {
        get signal() {
          reads++;
          return caller.signal;
        },
      };
      const quiet = createWebhookHandler(base(store)).onAny(async () => {});
      for (let i = 0; i < 3; i++) {
        const notification = parseNotification(purchase({ payment_id: randomUUID() }));
        expect(await quiet.process(notification, undefined, options)).toBe('handled');
      }
      expect(reads).toBe(0);
      const seen: AbortSignal[] = [];
      const reading = createWebhookHandler(base(store)).onAny(async (_n, _c, delivery) => {
        seen.push(delivery.signal);
        caller.abort(new Error('handed back'));
      });
      const notification = parseNotification(purchase({ payment_id: randomUUID() }));
      expect(await reading.process(notification, undefined, options)).toBe('handled');
      expect(reads).toBeGreaterThan(0);
      expect(seen[0]!.aborted).toBe(true);
      expect((seen[0]!.reason as Error).message).toBe('handed back');
    });

    it('throws handler.failed as a delivery answers 500, and a retry runs only the handlers that have not succeeded', async () => {
      const store = storeCase.make();
      const calls: string[] = [];
      let emailFails = true;
      const webhook = createWebhookHandler(base(store))
        .on('purchase', function fulfil() {
          calls.push('fulfil');
        })
        .on('recurring', function email() {
          calls.push('email');
          if (emailFails) {
            emailFails = false;
            throw new Error('the mail server is down');
          }
        });
      const { notification } = charge();
      const failed = await webhook.process(notification).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(HandlerError);
      expect((failed as HandlerError).code).toBe('handler.failed');
      expect(await webhook.process(notification)).toBe('handled');
      expect(await webhook.process(notification)).toBe('duplicate');
      // A transactional store rolled the first run back as a whole: both ran again, their effects once.
      expect(calls).toEqual(
        storeCase.transactional ? ['fulfil', 'email', 'fulfil', 'email'] : ['fulfil', 'email', 'email'],
      );
    });
  });
});

describe('webhook.process', () => {
  it('answers ignored when no handler matches, and stale with a ledger for a status earlier than one handled', async () => {
    const { ledger, records } = rankLedger();
    const webhook = createWebhookHandler({ ...base(new MemoryStore()), ledger }).on('refund', () => {});
    const paymentId = randomUUID();
    expect(await createWebhookHandler(base(new MemoryStore())).process(parseNotification(purchase()))).toBe(
      'ignored',
    );
    expect(await webhook.process(parseNotification(purchase({ payment_id: paymentId })))).toBe('handled');
    const late = parseNotification(
      purchase({ payment_id: paymentId, status: 'pending', status_code: '2122' }),
    );
    expect(await webhook.process(late)).toBe('stale');
    expect(await webhook.process(late)).toBe('duplicate');
    expect(records).toEqual(['success', 'pending']);
  });

  it('tells the handlers how the notification was verified: secretIndex -1 unless given, and a signal', async () => {
    const deliveries: Delivery[] = [];
    const webhook = createWebhookHandler<{ source: string }>({
      secret: STORE_SECRET,
      logger: false,
      handle: (_n, _context, delivery) => void deliveries.push(delivery),
    });
    const first = parseNotification(purchase({ payment_id: randomUUID() }));
    const second = parseNotification(purchase({ payment_id: randomUUID() }));
    await webhook.process(first, { source: 'api' });
    await webhook.process(second, { source: 'queue' }, { secretIndex: 1, secretId: 'old' });
    expect(deliveries.map((d) => [d.secretIndex, d.secretId, d.key, d.signal.aborted])).toEqual([
      [-1, undefined, `${first.payment_id}:purchase:success:1000`, false],
      [1, 'old', `${second.payment_id}:purchase:success:1000`, false],
    ]);
    expect(deliveries[0]!.raw).toBe(first.raw);
  });

  it("keeps no listener on the caller's signal once a run that never settles is given up", async () => {
    const caller = new AbortController();
    // A handler that never settles and never reads delivery.signal: the run is given up after ten handlerTimeoutMs,
    // and giving it up aborts its signal, made only then, after the run stopped following the caller.
    const webhook = createWebhookHandler({
      ...base(new MemoryStore()),
      handlerTimeoutMs: 40,
      handle: () => new Promise(() => {}),
    });
    const notification = parseNotification(purchase({ payment_id: randomUUID() }));
    vi.useFakeTimers();
    try {
      const answer = webhook.process(notification, undefined, { signal: caller.signal });
      const refused = expect(answer).rejects.toMatchObject({ code: 'handler.timeout' });
      await vi.advanceTimersByTimeAsync(40 * 10 + 50);
      await refused;
      await webhook.settled();
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives what a failing handler threw to onError, as a delivery does', async () => {
    const codes: string[] = [];
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      logger: false,
      onError: (error) => void codes.push(error.code),
      handle: () => {
        throw new Error('down');
      },
    });
    await expect(webhook.process(parseNotification(purchase()))).rejects.toMatchObject({
      code: 'handler.failed',
      status: 500,
    });
    expect(codes).toEqual(['handler.failed']);
  });
});

describe.skipIf(!servers.cases.some((c) => c.name === 'PostgresInbox' && c.up))(
  'webhook.process with the PostgreSQL inbox',
  () => {
    it("runs the handlers inside the inbox's transaction: their writes commit with the claim", async () => {
      const inbox = servers.cases
        .find((c) => c.name === 'PostgresInbox')!
        .make() as PostgresInbox<pg.PoolClient>;
      const webhook = createWebhookHandler(base(inbox)).on('purchase', async (n, _c, delivery) => {
        await inbox
          .client(delivery)
          .query(`INSERT INTO ${servers.appTable} (id) VALUES ($1)`, [n.payment_id]);
      });
      const { notification, body } = charge();
      expect(await webhook.process(notification)).toBe('handled');
      expect((await webhook(formRequest(body), undefined)).body).toBe(DUPLICATE);
      const rows = await servers
        .pool()
        .query(`SELECT id FROM ${servers.appTable} WHERE id = $1`, [notification.payment_id]);
      expect(rows.rows).toEqual([{ id: notification.payment_id }]);
    });
  },
);
