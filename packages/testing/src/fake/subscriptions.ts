import { addInterval, atTime, formatDate, type IntervalUnit } from './calendar.js';
import type { PaymentOutcome } from './outcomes.js';

/** A subscription's schedule, every default of spec 4.5 applied. */
export interface SubscriptionPlan {
  interval_unit: IntervalUnit;
  interval_count: number;
  retry_attempts: number;
  retry_interval_hours: number;
  /** First scheduled charge (`YYYY-MM-DD`); without it, one interval after the initial payment. */
  start_date?: string;
  /** Last day a scheduled charge may fall on (`YYYY-MM-DD`). */
  expiry_date?: string;
  /** Charge time, `HH:MM:SS` UTC. */
  time: string;
  notification_url?: string;
  amount: number;
}

/** The recurring config's status (2.5). */
export type SubscriptionStatus = 'init' | 'active' | 'canceled';

/** A subscription as the fake keeps it. */
export interface FakeSubscription {
  readonly id: string;
  readonly paymentId: string;
  readonly plan: SubscriptionPlan;
  status: SubscriptionStatus;
  /** Time (ms) of scheduled charge 0. */
  readonly anchor: number;
  /** Index of the next scheduled charge. */
  nextIndex: number;
  /** A retry waiting after a failed charge. */
  retry: { chargeIndex: number; attempt: number; dueAt: number } | undefined;
  /** Outcomes for the next charges (`queueChargeOutcomes`); success when empty. */
  readonly outcomes: PaymentOutcome[];
}

/** Time (ms) of scheduled charge 0: `start_date` at `time`, else one interval after `createdAt`, at `time`. */
export function firstChargeAt(plan: SubscriptionPlan, createdAt: Date): number {
  const date = plan.start_date ?? formatDate(addInterval(createdAt, plan.interval_unit, plan.interval_count));
  return atTime(date, plan.time).getTime();
}

/** Time (ms) of scheduled charge `index`, or `undefined` when it falls after `expiry_date`. */
export function scheduledChargeAt(subscription: FakeSubscription, index: number): number | undefined {
  const { plan } = subscription;
  const at = addInterval(new Date(subscription.anchor), plan.interval_unit, plan.interval_count * index);
  if (plan.expiry_date !== undefined && formatDate(at) > plan.expiry_date) return undefined;
  return at.getTime();
}

/** The subscription's next event: its pending retry or its next scheduled charge, whichever is first. */
export function nextEvent(
  subscription: FakeSubscription,
): { at: number; kind: 'charge' | 'retry' } | undefined {
  if (subscription.status !== 'active') return undefined;
  const charge = scheduledChargeAt(subscription, subscription.nextIndex);
  const retry = subscription.retry?.dueAt;
  if (retry !== undefined && (charge === undefined || retry < charge)) return { at: retry, kind: 'retry' };
  return charge === undefined ? undefined : { at: charge, kind: 'charge' };
}
