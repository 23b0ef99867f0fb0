import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  authCaptureRefund,
  authVoid,
  checkTransitions,
  instance,
  ledgerCases,
  permutations,
  SECRET,
  securePurchase,
  subscription,
  uniqueOrder,
  withDuplicates,
} from '../../test/ledger-cases.js';
import type { PaymentEntry, Transition } from './entry.js';

// The ledger's promise, shown on every store: however the webhooks of a payment overtake each other and repeat, its
// state ends where the in-order delivery ends, each transition fires once, and none goes backwards.

const { cases } = await ledgerCases('orderings');

/** What two runs of one scenario must agree on (the order id aside). */
function summary(entry: PaymentEntry | undefined) {
  if (entry === undefined) return undefined;
  const { state, paidAmount, authorizedAmount, capturedAmount, refundedAmount, subscription: plan } = entry;
  const refunds = Object.values(entry.refunds).sort();
  const charges = Object.entries(entry.charges)
    .map(([id, c]) => [id.replace(entry.orderId, ''), c] as const)
    .sort(([a], [b]) => a.localeCompare(b));
  const subscription = plan && { ...plan, id: plan.id?.replace(entry.orderId, '') };
  return {
    state,
    paidAmount,
    authorizedAmount,
    capturedAmount,
    refundedAmount,
    refunds,
    charges,
    subscription,
  };
}

/** The transitions' targets, by subject (a run's order of firing may differ between two orders, the set may not). */
const targets = (fired: readonly Transition[]) =>
  fired.map((t) => `${t.subject}:${(t.chargeId ?? '').replace(t.orderId, '')}:${t.to}`).sort();

const SCENARIOS = [
  {
    name: 'a 3-D Secure purchase with two partial refunds',
    make: securePurchase,
    state: 'partially_refunded',
  },
  { name: 'auth → capture → refund', make: authCaptureRefund, state: 'partially_refunded' },
  { name: 'auth → void', make: authVoid, state: 'voided' },
] as const;

describe.each(cases)('the ledger on $name', (storeCase) => {
  describe.skipIf(!storeCase.up).each(SCENARIOS)('$name', ({ make, state }) => {
    it('ends in the state of the in-order delivery for every order, with duplicates; each transition once, none backwards', async () => {
      const inOrder = instance(storeCase, SECRET);
      const orderId = uniqueOrder('in-order');
      for (const webhook of make(orderId)) expect(await inOrder.deliver(webhook)).toBe('handled');
      const expected = summary(await inOrder.ledger.get(orderId));
      expect(expected?.state).toBe(state);
      expect(checkTransitions(inOrder.fired)).toEqual([]);

      const orders = permutations([0, 1, 2, 3].slice(0, make('x').length));
      expect(orders.length).toBe(make('x').length === 4 ? 24 : make('x').length === 3 ? 6 : 2);
      for (const [n, order] of orders.entries()) {
        const app = instance(storeCase, SECRET);
        const id = uniqueOrder(`perm${n}`);
        const webhooks = make(id);
        const outcomes: string[] = [];
        for (const i of withDuplicates(order, n + 1)) outcomes.push(await app.deliver(webhooks[i]!));
        const entry = await app.ledger.get(id);
        expect({ order, entry: summary(entry) }).toEqual({ order, entry: expected });
        expect({ order, problems: checkTransitions(app.fired) }).toEqual({ order, problems: [] });
        // The same steps as in order, but those a late webhook finds behind the state (a pending after the success,
        // an auth after a refund): an early refund fires `paid` itself, so `paid` is there whichever came first.
        const passable = (t: string) => !t.endsWith(':pending') && !t.endsWith(':authorized');
        expect(targets(app.fired).filter(passable)).toEqual(targets(inOrder.fired).filter(passable));
        expect(targets(app.fired).every((t) => targets(inOrder.fired).includes(t))).toBe(true);
        // Every webhook delivered once more than it was handled is a duplicate, never handled twice.
        expect(outcomes.filter((o) => o === 'duplicate').length).toBe(outcomes.length - webhooks.length);
        // The history holds each transition with the delivery that caused it.
        expect(entry?.history.map((t) => t.cause.key)).toEqual(app.fired.map((t) => t.cause.key));
        expect(entry?.version).toBe(webhooks.length);
      }
    });
  });

  it.skipIf(!storeCase.up)(
    "200 seeded random orders of a subscription's three charges with a failed one end as in order",
    async () => {
      const inOrder = instance(storeCase, SECRET);
      const orderId = uniqueOrder('sub');
      for (const webhook of subscription(orderId)) await inOrder.deliver(webhook);
      const expected = summary(await inOrder.ledger.get(orderId));
      expect(expected).toMatchObject({
        state: 'paid',
        subscription: { id: 'sub-', status: 'active' },
        charges: [
          ['-t1', { state: 'paid', amount: 25 }],
          ['-t2', { state: 'failed' }],
          ['-t3', { state: 'paid', amount: 25 }],
        ],
      });
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.nat(3), { minLength: 4, maxLength: 9 }),
          fc.nat(),
          async (extra, seed) => {
            const app = instance(storeCase, SECRET);
            const id = uniqueOrder('sub');
            const webhooks = subscription(id);
            // Every webhook at least once, some again, in a shuffled order.
            const picks = shuffle([0, 1, 2, 3, ...extra], seed);
            for (const i of picks) await app.deliver(webhooks[i]!);
            expect(summary(await app.ledger.get(id))).toEqual(expected);
            expect(checkTransitions(app.fired)).toEqual([]);
            expect(targets(app.fired).filter((t) => !t.endsWith(':pending') && !t.endsWith(':init'))).toEqual(
              targets(inOrder.fired).filter((t) => !t.endsWith(':pending') && !t.endsWith(':init')),
            );
          },
        ),
        { numRuns: 200, seed: 44 },
      );
    },
    120_000,
  );

  it.skipIf(!storeCase.up)(
    'answers a failure after a success as a conflict, whatever came between',
    async () => {
      const conflicts: string[] = [];
      const app = instance(storeCase, SECRET, { onConflict: (c) => void conflicts.push(c.reason) });
      for (const [n, before] of [[], ['pending'], ['refund']].entries()) {
        const id = uniqueOrder(`late-failure${n}`);
        const [pending, success, refund] = securePurchase(id);
        if (before.includes('pending')) await app.deliver(pending!);
        expect(await app.deliver(success!)).toBe('handled');
        if (before.includes('refund')) await app.deliver(refund!);
        const failure = {
          ...success!,
          status: 'failure',
          status_code: '2001',
          processed_at: '2026-11-22T10:16:00',
        };
        expect(await app.deliver(failure)).toBe('conflict');
        expect((await app.ledger.get(id))?.state).toBe(
          before.includes('refund') ? 'partially_refunded' : 'paid',
        );
      }
      expect(conflicts).toEqual(['failure_after_success', 'failure_after_success', 'failure_after_success']);
      expect(app.handled.filter((h) => h === 'purchase.failure')).toEqual([]);
    },
  );
});

/** `items` in an order `seed` chooses (Fisher–Yates on a small LCG). */
function shuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
