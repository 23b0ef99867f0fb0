import {
  type InitRecurring,
  type PaymentRequest,
  resolveInitRecurring,
  type SplitItem,
  type SplitSumRule,
  validateAtServiceLevel,
} from '@payhook/payments';
import { formatTime } from './calendar.js';
import { FakeServiceError } from './errors.js';
import type { SubscriptionPlan } from './subscriptions.js';

/** A request body core's validators accepted: a payment (4.1), or a split purchase (4.2) with its `split`. */
export type ValidRequest = PaymentRequest & { split?: SplitItem[] };

/**
 * Runs core's `validateAtServiceLevel` (the one source of the rules, the API client's too) over a request body
 * and answers the request to go on with: as sent when `strict`, else as the service could read it.
 * @throws {FakeServiceError} `V-400` (400) listing every violation.
 */
export function validRequest(
  body: unknown,
  options: {
    split: boolean;
    sector: string | undefined;
    now: Date;
    splitSum?: SplitSumRule | undefined;
    strict: boolean;
  },
): ValidRequest {
  const { split, strict, now, sector, splitSum } = options;
  const result = validateAtServiceLevel(body, {
    split,
    strict,
    now,
    ...(sector !== undefined ? { sector } : {}),
    ...(splitSum !== undefined ? { splitSum } : {}),
  });
  if (!result.valid) {
    throw new FakeServiceError(
      'V-400',
      400,
      'The request is invalid: see args.violations.',
      result.violations,
    );
  }
  return result.request as ValidRequest;
}

/** The schedule of a validated `init_recurring`, every default applied (core's plus the payment's own). */
export function planFor(init: InitRecurring, payment: { amount: number; createdAt: Date }): SubscriptionPlan {
  const resolved = resolveInitRecurring(init);
  return {
    interval_unit: resolved.interval_unit,
    interval_count: resolved.interval_count,
    retry_attempts: resolved.retry_attempts,
    retry_interval_hours: resolved.retry_interval_hours,
    time: resolved.time ?? formatTime(payment.createdAt),
    amount: resolved.amount ?? payment.amount,
    ...(resolved.start_date !== undefined ? { start_date: resolved.start_date } : {}),
    ...(resolved.expiry_date !== undefined ? { expiry_date: resolved.expiry_date } : {}),
    ...(resolved.notification_url !== undefined ? { notification_url: resolved.notification_url } : {}),
  };
}
