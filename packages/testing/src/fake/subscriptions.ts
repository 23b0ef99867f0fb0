import type { IntervalUnit } from '@payhook/payments';
import { addInterval, atTime, formatDate } from './calendar.js';
import type { PaymentOutcome } from './outcomes.js';

/**
 * A subscription's schedule, every default of spec 4.5 applied.
 *
 * @example
 * fake.subscription(id)!.plan.retry_interval_hours; // 24 unless given
 */
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

/**
 * The recurring config's status (2.5).
 *
 * @example
 * if (fake.subscription(id)!.status === 'canceled') return;
 */
export type SubscriptionStatus = 'init' | 'active' | 'canceled';

/** A subscription as the fake keeps it. */
export interface FakeSubscription {
  readonly id: string;
  readonly paymentId: string;
  readonly plan: SubscriptionPlan;
  status: SubscriptionStatus;
  /** Time (ms) the schedule counts from: `start_date`, or the initial payment's day, at `time`. */
  anchor: number;
  /** Intervals from the anchor to charge 0: 0 from `start_date`, 1 from the initial payment. */
  offset: number;
  /** Index of the next scheduled charge. */
  nextIndex: number;
  /** A retry waiting after a failed charge. */
  retry: { chargeIndex: number; attempt: number; dueAt: number } | undefined;
  /** Outcomes for the next charges (`queueChargeOutcomes`); success when empty. */
  readonly outcomes: PaymentOutcome[];
}

/**
 * Where the schedule counts from: `start_date` at `time` (charge 0 on that day), else the initial payment's day
 * at `time` (charge 0 one interval later).
 */
export function scheduleAnchor(plan: SubscriptionPlan, paidAt: Date): { anchor: number; offset: number } {
  if (plan.start_date !== undefined)
    return { anchor: atTime(plan.start_date, plan.time).getTime(), offset: 0 };
  return { anchor: atTime(formatDate(paidAt), plan.time).getTime(), offset: 1 };
}

/** Time (ms) of scheduled charge `index`, or `undefined` when it falls after `expiry_date`. */
function scheduledChargeAt(subscription: FakeSubscription, index: number): number | undefined {
  const { plan } = subscription;
  const at = addInterval(
    new Date(subscription.anchor),
    plan.interval_unit,
    plan.interval_count * (index + subscription.offset),
  );
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

/** Sets a subscription's status; once active, its schedule counts from `now` unless it has a `start_date`. */
export function setSubscriptionStatus(
  subscription: FakeSubscription,
  status: SubscriptionStatus,
  now: Date,
): void {
  subscription.status = status;
  // Without start_date the schedule counts from the payment's success, not from its creation.
  if (status === 'active') Object.assign(subscription, scheduleAnchor(subscription.plan, now));
}
