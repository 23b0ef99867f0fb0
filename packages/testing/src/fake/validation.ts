import {
  type InitRecurring,
  type PaymentRequest,
  resolveInitRecurring,
  type SplitItem,
  type SplitSumRule,
  type Violation,
  validatePaymentRequest,
  validateSplitPurchaseRequest,
} from '@payhook/core/validation';
import { formatTime } from './calendar.js';
import { FakeServiceError } from './errors.js';
import type { SubscriptionPlan } from './subscriptions.js';

/** A request body core's validators accepted: a payment (4.1), or a split purchase (4.2) with its `split`. */
export type ValidRequest = PaymentRequest & { split?: SplitItem[] };

/** Card data a hosted request may carry: ignored (the checkout collects the card) unless the fake is strict. */
const HOSTED_CARD_FIELDS = ['cc_number', 'exp_month', 'exp_year', 'card_cvv', 'cc_cvv', 'cc_token'];

/**
 * The currency of a payment that names none, unless the fake is strict: the spec does not mark `currency` required
 * on a request, but every notification carries one (6.1), so the fake needs one. See docs/assumptions.md.
 */
const DEFAULT_CURRENCY = 'UAH';

/**
 * Core's rules the spec does not show (docs/assumptions.md, "The fake's strict mode"): enforced only with
 * `strict: true`, because a fake stricter than the service fails a merchant's valid code. A split purchase's
 * `description` and `currency` are required by the spec (4.2), so they stay required there.
 */
function onlyStrict(violation: Violation, split: boolean): boolean {
  const payment = !split && violation.code === 'required';
  return (
    (payment && (violation.field === 'description' || violation.field === 'currency')) ||
    violation.code === 'recurring.method'
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A field sent as `''` counts as not sent, as public plugins leave one out (`customer_email: ''`); a required
 * one is then still refused as missing.
 */
function withoutEmptyStrings(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== ''));
}

/**
 * What the service could accept where the spec says nothing: a field sent empty (left out), a card number with
 * spaces (digits kept), card fields on a hosted request (dropped), no currency (`UAH`).
 */
function lenient(body: unknown, split: boolean): unknown {
  if (!isObject(body)) return body;
  const out = withoutEmptyStrings(body);
  if (isObject(out.init_recurring)) out.init_recurring = withoutEmptyStrings(out.init_recurring);
  if (out.currency === undefined && !split) out.currency = DEFAULT_CURRENCY;
  if (typeof out.cc_number === 'string') out.cc_number = out.cc_number.replace(/ /g, '');
  if (out.mode === 'hosted') for (const field of HOSTED_CARD_FIELDS) delete out[field];
  return out;
}

/**
 * Runs core's validators (the one source of the rules) over a request body and answers the request to go on with:
 * as sent when `strict`, else with the leniency of `lenient` and without the rules of `onlyStrict`.
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
  const request = options.strict ? body : lenient(body, options.split);
  const context = {
    now: options.now,
    ...(options.sector !== undefined ? { sector: options.sector } : {}),
    splitSum: options.splitSum ?? (options.strict ? 'equal' : 'ignore'),
  };
  const result = options.split
    ? validateSplitPurchaseRequest(request, context)
    : validatePaymentRequest(request, context);
  const violations = options.strict
    ? result.violations
    : result.violations.filter((v) => !onlyStrict(v, options.split));
  if (violations.length > 0) {
    throw new FakeServiceError('V-400', 400, 'The request is invalid: see args.violations.', violations);
  }
  return request as ValidRequest;
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
