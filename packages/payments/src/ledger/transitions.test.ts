import { type Delivery, parseNotification } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../../../core/test/fixtures.js';
import type { Transition } from './entry.js';
import { createPaymentLedger } from './ledger.js';

// The table of transitions (docs/assumptions.md), one notification at a time, each recorded under its own key.

const ORDER = { order_id: 'order-t', payment_id: 'pay-t', amount: 100, currency: 'UAH' };
const pending = purchase({ ...ORDER, status: 'pending', status_code: '2122' });
const success = purchase(ORDER);
const failure = purchase({ ...ORDER, status: 'failure', status_code: '2001' });
const auth = purchase({ ...ORDER, method: 'auth', status_code: '1002' });
const capture = (op: string, amount = 100) =>
  refund({ ...ORDER, method: 'capture', operation_id: op, amount });
const voided = refund({ ...ORDER, method: 'void', operation_id: 'v1' });
const refunded = (op: string, amount: number, extra = {}) =>
  refund({ ...ORDER, operation_id: op, amount, ...extra });

/** Records each webhook in turn; answers each outcome and the transitions fired, as `from>to`. */
async function run(...webhooks: Record<string, unknown>[]) {
  const ledger = createPaymentLedger({ logger: false });
  const fired: Transition[] = [];
  ledger.onTransition((t) => void fired.push(t));
  const outcomes: string[] = [];
  for (const [n, webhook] of webhooks.entries()) {
    const delivery = { key: `k${n}`, secretIndex: 0, raw: webhook } as unknown as Delivery;
    const decision = await ledger.record(parseNotification(webhook), delivery);
    await decision.after?.(delivery);
    outcomes.push(decision.outcome);
  }
  const steps = fired.map((t) => `${t.from}>${t.to}${t.implied ? '*' : ''}`);
  return { outcomes, steps, entry: await ledger.get(ORDER.order_id), fired };
}

describe('the payment ledger, one notification at a time', () => {
  it.each([
    [
      '3-D Secure, then paid',
      [pending, success],
      ['handle', 'handle'],
      ['new>pending', 'pending>paid'],
      'paid',
    ],
    ['a pending after the success is stale', [success, pending], ['handle', 'stale'], ['new>paid'], 'paid'],
    [
      'a failed payment',
      [pending, failure],
      ['handle', 'handle'],
      ['new>pending', 'pending>failed'],
      'failed',
    ],
    ['a failure after a success', [success, failure], ['handle', 'conflict'], ['new>paid'], 'paid'],
    ['a success after a failure', [failure, success], ['handle', 'conflict'], ['new>failed'], 'failed'],
    [
      'auth, capture',
      [auth, capture('c1')],
      ['handle', 'handle'],
      ['new>authorized', 'authorized>paid'],
      'paid',
    ],
    [
      'an early capture implies the auth',
      [capture('c1'), auth],
      ['handle', 'stale'],
      ['new>authorized*', 'authorized>paid'],
      'paid',
    ],
    [
      'an early void implies the auth',
      [voided, auth],
      ['handle', 'stale'],
      ['new>authorized*', 'authorized>voided'],
      'voided',
    ],
    [
      'a void after a capture',
      [auth, capture('c1'), voided],
      ['handle', 'handle', 'conflict'],
      ['new>authorized', 'authorized>paid'],
      'paid',
    ],
    [
      'an early refund implies the payment, its success then settles the sum',
      [refunded('r1', 100), success],
      ['handle', 'handle'],
      ['new>paid*', 'paid>partially_refunded', 'partially_refunded>refunded'],
      'refunded',
    ],
    [
      'two refunds summing to the amount',
      [success, refunded('r1', 60), refunded('r2', 40)],
      ['handle', 'handle', 'handle'],
      ['new>paid', 'paid>partially_refunded', 'partially_refunded>refunded'],
      'refunded',
    ],
    [
      'a refund redelivered with other bytes counts once (by operation_id)',
      [success, refunded('r1', 30), refunded('r1', 30, { status_code: '1004' })],
      ['handle', 'handle', 'stale'],
      ['new>paid', 'paid>partially_refunded'],
      'partially_refunded',
    ],
    [
      'refunds above the amount paid',
      [success, refunded('r1', 60), refunded('r2', 60)],
      ['handle', 'handle', 'conflict'],
      ['new>paid', 'paid>partially_refunded'],
      'partially_refunded',
    ],
    [
      'an unknown status is kept, the state not moved',
      [success, purchase({ ...ORDER, status: 'antifraud' })],
      ['handle', 'handle'],
      ['new>paid'],
      'paid',
    ],
    [
      'a refund after a void',
      [auth, voided, refunded('r1', 10)],
      ['handle', 'handle', 'conflict'],
      ['new>authorized', 'authorized>voided'],
      'voided',
    ],
  ] as const)('%s', async (_name, webhooks, outcomes, steps, state) => {
    const result = await run(...webhooks);
    expect(result.outcomes).toEqual(outcomes);
    expect(result.steps).toEqual(steps);
    expect(result.entry?.state).toBe(state);
  });

  it('keeps amounts by operation, unknown statuses, and the history with the deliveries that caused it', async () => {
    const { entry, fired } = await run(
      pending,
      success,
      refunded('r1', 30),
      refunded('r2', 20.5),
      refunded('r1', 30, { status_code: '1004' }),
      purchase({ ...ORDER, status: 'processing' }),
    );
    expect(entry).toMatchObject({
      state: 'partially_refunded',
      version: 6,
      paidAmount: 100,
      refundedAmount: 50.5,
      refunds: { r1: 30, r2: 20.5 },
      unknownStatuses: ['processing'],
    });
    expect(fired.at(-1)).toMatchObject({
      from: 'partially_refunded',
      to: 'partially_refunded',
      refund: { operationId: 'r2', amount: 20.5 },
    });
    expect(entry?.history.map((t) => [t.version, t.cause.key, t.to])).toEqual([
      [1, 'k0', 'pending'],
      [2, 'k1', 'paid'],
      [3, 'k2', 'partially_refunded'],
      [4, 'k3', 'partially_refunded'],
    ]);
    expect(entry?.deliveries.map((d) => d.verdict)).toEqual([
      'moved',
      'moved',
      'moved',
      'moved',
      'stale',
      'news',
    ]);
  });

  it('decides a delivery recorded again (a failed run redelivered) as the first time', async () => {
    const ledger = createPaymentLedger();
    const delivery = { key: 'same', secretIndex: 0, raw: {} } as unknown as Delivery;
    const first = await ledger.record(parseNotification(success), delivery);
    const again = await ledger.record(parseNotification(success), delivery);
    expect([first.outcome, again.outcome]).toEqual(['handle', 'handle']);
    expect((await ledger.get(ORDER.order_id))?.version).toBe(1);
  });
});

describe('onTransition', () => {
  it('calls a listener for one target state only, until it is stopped', async () => {
    const ledger = createPaymentLedger();
    const refundedOrders: string[] = [];
    const everything: string[] = [];
    ledger.onTransition('refunded', (t) => void refundedOrders.push(t.orderId));
    const stop = ledger.onTransition((t) => void everything.push(t.to));
    const record = async (webhook: Record<string, unknown>, key: string) => {
      const delivery = { key, secretIndex: 0, raw: webhook } as unknown as Delivery;
      await (await ledger.record(parseNotification(webhook), delivery)).after?.(delivery);
    };
    await record(success, 'a');
    stop();
    await record(refunded('r1', 100), 'b');
    expect(refundedOrders).toEqual([ORDER.order_id]);
    expect(everything).toEqual(['paid']);
    expect(() => ledger.onTransition('paid', undefined as never)).toThrow(TypeError);
  });
});
