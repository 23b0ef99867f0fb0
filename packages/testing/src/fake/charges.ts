import { issueReceipt, type Ledger, paymentState, sendWebhook } from './ledger.js';
import { STATUS } from './outcomes.js';
import { limitInfo, newChargeRecord } from './records.js';
import { type FakeSubscription, nextEvent } from './subscriptions.js';

/** The fake-clock time (ms) of the next charge or retry of any subscription. */
export function nextCharge(ledger: Ledger): number | undefined {
  let earliest: number | undefined;
  for (const subscription of ledger.subscriptions.values()) {
    const event = nextEvent(subscription);
    if (event && (earliest === undefined || event.at < earliest)) earliest = event.at;
  }
  return earliest;
}

/** Runs every charge and retry due at `now`, earliest first, then waits for their webhooks. */
export async function runCharges(ledger: Ledger, now: number): Promise<void> {
  for (;;) {
    let due: { subscription: FakeSubscription; at: number; kind: 'charge' | 'retry' } | undefined;
    for (const subscription of ledger.subscriptions.values()) {
      const event = nextEvent(subscription);
      if (event && event.at <= now && (due === undefined || event.at < due.at))
        due = { subscription, ...event };
    }
    if (!due) break;
    charge(ledger, due.subscription, due.kind, due.at);
  }
  await ledger.outbox.idle();
}

/**
 * One charge of a subscription, with the next queued outcome (success when none): a receipt, or a decline that
 * schedules a retry while the plan allows one.
 */
function charge(ledger: Ledger, subscription: FakeSubscription, kind: 'charge' | 'retry', at: number): void {
  const { retry, plan } = subscription;
  // A new scheduled charge supersedes the retries of the previous one.
  const [index, attempt] =
    kind === 'retry' && retry ? [retry.chargeIndex, retry.attempt] : [subscription.nextIndex++, 0];
  subscription.retry = undefined;
  const state = paymentState(ledger, subscription.paymentId);
  const outcome = subscription.outcomes.shift() ?? 'success';
  const date = new Date(at);
  const record = newChargeRecord(state.record, {
    amount: plan.amount,
    at: date,
    recurring: { id: subscription.id, status: subscription.status },
    ids: ledger.ids,
  });
  if (outcome === 'success') {
    Object.assign(record, STATUS.purchaseSuccess);
    issueReceipt(ledger, record);
  } else {
    if (outcome === 'insufficient_funds') Object.assign(record, STATUS.insufficientFunds);
    else Object.assign(record, STATUS.declined, { limit_info: limitInfo(date) });
    if (attempt < plan.retry_attempts) {
      subscription.retry = {
        chargeIndex: index,
        attempt: attempt + 1,
        dueAt: at + plan.retry_interval_hours * 3_600_000,
      };
    }
  }
  state.charges.push({ index, attempt, at: date, record });
  sendWebhook(ledger, state, structuredClone(record), true);
}
