import { describe, expect, it } from 'vitest';
import {
  checkTransitions,
  instance,
  type LedgerCase,
  ledgerCases,
  permutations,
  SECRET,
  securePurchase,
  subscription,
  uniqueOrder,
} from '../../test/ledger-cases.js';
import type { ResendClient, ResendRequest } from '../reconcile/api-client.js';
import type { LedgerStore } from './contract.js';
import type { Transition } from './entry.js';

// Several instances of one app on a shared store: four workers delivering one payment's webhooks at once, a restart
// in the middle, and a conflict settled by asking the service to re-send.

const { cases } = await ledgerCases('workers');
const shared = cases.filter((storeCase) => storeCase.shared);

/** Holds every append until `parties` are waiting in it (or `timeoutMs` passed), and counts how many overlapped. */
function barrier(parties: number, timeoutMs = 5_000) {
  let waiting = 0;
  let most = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const timer = setTimeout(open, timeoutMs);
  return {
    get most() {
      return most;
    },
    wrap(store: LedgerStore): LedgerStore {
      return {
        name: store.name,
        read: (orderId) => store.read(orderId),
        async append(orderId, fact, transaction) {
          waiting++;
          most = Math.max(most, waiting);
          if (waiting >= parties) {
            clearTimeout(timer);
            open();
          }
          await opened;
          try {
            return await store.append(orderId, fact, transaction);
          } finally {
            waiting--;
          }
        },
      };
    },
  };
}

const byVersion = (fired: readonly Transition[]) => [...fired].sort((a, b) => a.version - b.version);

describe.each(shared)('four workers on $name', (storeCase) => {
  it.skipIf(!storeCase.up)(
    'deliver the four webhooks of a payment at once (overlapping), then their copies: one state, each transition once',
    async () => {
      const reference = instance(storeCase, SECRET);
      const referenceId = uniqueOrder('ref');
      for (const webhook of securePurchase(referenceId)) await reference.deliver(webhook);
      const expected = await reference.ledger.get(referenceId);

      for (const [n, order] of permutations([0, 1, 2, 3]).slice(0, 8).entries()) {
        const gate = barrier(4);
        const fired: Transition[] = [];
        const gated: LedgerCase = { ...storeCase, ledgerStore: () => gate.wrap(storeCase.ledgerStore()) };
        const workers = [0, 1, 2, 3].map(() => instance(gated, SECRET, {}, fired));
        const id = uniqueOrder(`at-once${n}`);
        const webhooks = securePurchase(id);
        // Worker w delivers webhook order[w], all at once; then each copy through another worker, at once again.
        const first = await Promise.all(order.map((i, w) => workers[w]!.deliver(webhooks[i]!)));
        expect(gate.most).toBe(4);
        expect(first.every((outcome) => outcome === 'handled' || outcome === 'stale')).toBe(true);
        const copies = await Promise.all(order.map((i, w) => workers[(w + 1) % 4]!.deliver(webhooks[i]!)));
        expect(copies).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);

        const entry = await workers[n % 4]!.ledger.get(id);
        expect({ state: entry?.state, refunded: entry?.refundedAmount, paid: entry?.paidAmount }).toEqual({
          state: expected?.state,
          refunded: expected?.refundedAmount,
          paid: expected?.paidAmount,
        });
        expect(entry?.version).toBe(4);
        // In the order of the log (the causal order every instance reads), each step once, none backwards.
        expect(checkTransitions(byVersion(fired))).toEqual([]);
        expect(entry?.history).toEqual(byVersion(fired));
        expect(fired.filter((t) => t.to === 'paid')).toHaveLength(1);
        if (storeCase.name.includes('inbox')) {
          // The ledger's row, locked until the claim's transaction commits, makes the handlers take turns: the
          // transitions fire in that order too.
          expect(checkTransitions(fired)).toEqual([]);
        }
      }
    },
    60_000,
  );

  it.skipIf(!storeCase.up)("a subscription's charges from four workers at once end as in order", async () => {
    const gate = barrier(4);
    const fired: Transition[] = [];
    const gated: LedgerCase = { ...storeCase, ledgerStore: () => gate.wrap(storeCase.ledgerStore()) };
    const workers = [0, 1, 2, 3].map(() => instance(gated, SECRET, {}, fired));
    const id = uniqueOrder('sub-at-once');
    const webhooks = subscription(id).reverse();
    await Promise.all(webhooks.map((webhook, w) => workers[w]!.deliver(webhook)));
    expect(gate.most).toBe(4);
    const entry = await workers[0]!.ledger.get(id);
    expect(entry?.state).toBe('paid');
    expect(Object.values(entry?.charges ?? {}).map((c) => c.state)).toEqual(
      expect.arrayContaining(['paid', 'failed', 'paid']),
    );
    expect(entry?.subscription?.status).toBe('active');
    expect(checkTransitions(byVersion(fired))).toEqual([]);
  });

  it.skipIf(!storeCase.up)(
    'continues after a restart in the middle: from the stored log, a failed run redelivered fires once',
    async () => {
      const fired: Transition[] = [];
      const id = uniqueOrder('restart');
      const [pending, success, refund1, refund2] = securePurchase(id);
      const before = instance(storeCase, SECRET, {}, fired);
      before.webhook.on('purchase.success', () => {
        throw new Error('the process died here');
      });
      expect(await before.deliver(pending!)).toBe('handled');
      await expect(before.deliver(success!)).rejects.toThrow('answered 500');
      // Recorded before the handlers ran (in the claim's transaction with the inbox, rolled back with it).
      const recorded = await before.ledger.get(id);
      expect(recorded?.state).toBe(storeCase.name.includes('inbox') ? 'pending' : 'paid');

      // A new process: new store clients, a new ledger, the success redelivered.
      const after = instance(storeCase, SECRET, {}, fired);
      expect(await after.deliver(success!)).toBe('handled');
      expect(await after.deliver(refund1!)).toBe('handled');
      expect(await after.deliver(pending!)).toBe('duplicate');
      expect(await after.deliver(refund2!)).toBe('handled');
      const entry = await after.ledger.get(id);
      expect(entry).toMatchObject({
        state: 'partially_refunded',
        paidAmount: 100,
        refundedAmount: 50,
        version: 4,
      });
      // No listener ran in the failed run (the handlers run first): each step fired once, by the process that
      // handled its delivery.
      expect(checkTransitions(fired)).toEqual([]);
      expect(fired.map((t) => t.to)).toEqual(['pending', 'paid', 'partially_refunded', 'partially_refunded']);
    },
  );
});

describe.each(cases)('conflicts on $name', (storeCase) => {
  it.skipIf(!storeCase.up)(
    "ask the service to re-send the payment's webhook (4.3), a charge's by its transaction (4.4)",
    async () => {
      const asked: ResendRequest[] = [];
      const client: ResendClient = {
        async resend(request) {
          asked.push(request);
          return { status: 200, record: undefined };
        },
      };
      const app = instance(storeCase, SECRET, { client });
      const id = uniqueOrder('resend');
      const [, success, refund1] = securePurchase(id);
      await app.deliver(success!);
      await app.deliver({ ...success!, status: 'failure', status_code: '2001' });
      // A refund above what was paid: recorded, not counted.
      const tooMuch = { ...refund1!, operation_id: `${id}-r9`, amount: 120 };
      expect(await app.deliver(tooMuch)).toBe('conflict');
      const sub = uniqueOrder('resend-sub');
      const [, charge1] = subscription(sub);
      await app.deliver(charge1!);
      expect(await app.deliver({ ...charge1!, status: 'failure', status_code: '2001' })).toBe('conflict');
      expect(asked).toEqual([
        { orderId: id, operation: 'purchase' },
        { orderId: id, operation: 'purchase' },
        { orderId: sub, operation: 'purchase', transactionId: `${sub}-t1` },
      ]);
      const entry = await app.ledger.get(id);
      expect(entry).toMatchObject({ state: 'paid', refundedAmount: 0 });
      expect(entry?.conflicts.map((c) => c.reason)).toEqual(['failure_after_success', 'refund_above_paid']);
    },
  );
});
