import type { Delivery } from '../src/protocol/delivery.js';
import type { LedgerDecision, WebhookLedger } from '../src/protocol/ledger.js';

const RANK: Readonly<Record<string, number>> = { pending: 1, success: 2, failure: 2 };

/**
 * A ledger for core's tests (the real one is `createPaymentLedger` of `@payhook/payments`): per payment, the furthest
 * status recorded; earlier is stale, a failure after a success (or the reverse) a conflict. It counts what it was
 * asked and what ran after the handlers, and decides a key recorded before as it did then.
 */
export function rankLedger(options: { fail?: () => boolean } = {}) {
  const furthest = new Map<string, string>();
  const byKey = new Map<string, LedgerDecision['outcome']>();
  const records: string[] = [];
  const after: string[] = [];
  const ledger: WebhookLedger = {
    name: 'rank',
    record(notification, delivery: Delivery) {
      if (options.fail?.()) throw new Error('ledger down');
      records.push(notification.status);
      const known = delivery.key === undefined ? undefined : byKey.get(delivery.key);
      const outcome = known ?? decide(notification.payment_id, notification.status);
      if (delivery.key !== undefined) byKey.set(delivery.key, outcome);
      return { outcome, after: () => void after.push(`${outcome}:${notification.status}`) };
    },
  };
  function decide(payment: string, status: string): LedgerDecision['outcome'] {
    const last = furthest.get(payment);
    const rank = RANK[status] ?? 0;
    if (last !== undefined && last !== status && rank === RANK[last] && rank === 2) return 'conflict';
    if (last !== undefined && rank <= (RANK[last] ?? 0)) return 'stale';
    furthest.set(payment, status);
    return 'handle';
  }
  return { ledger, records, after };
}
