import { success, threeDsPending } from './fixtures/states.js';
import type { FakePrimary } from './fixtures/wire.js';

/**
 * An exact copy of a notification, as the service sends it again after a network or server delay (spec 6).
 * Signed, it gives the very same body; a receiver must answer it as a duplicate. Against a running app, a scenario's
 * `redeliver` step sends these copies (`@payhook/testing/scenario`).
 *
 * @example
 * const purchase = fakePurchase();
 * (await postWebhook(app, purchase, { secret })).expectHandled();
 * (await postWebhook(app, redeliver(purchase), { secret })).expectDuplicate();
 */
export function redeliver<N extends object>(notification: N): N {
  return structuredClone(notification);
}

/**
 * A redelivery whose field set grew (spec 6 and 9: fields may be added at any time): the same notification with
 * one unknown field and a later `processed_at`. A receiver must still answer it as a duplicate.
 *
 * @example
 * (await postWebhook(app, redeliverWithNewField(purchase), { secret })).expectDuplicate();
 */
export function redeliverWithNewField<N extends object>(
  notification: N,
  field = 'payhook_new_field',
  value: unknown = 'added by the service after the first delivery',
): N {
  const copy: Record<string, unknown> = { ...structuredClone(notification), [field]: value };
  if (typeof copy.processed_at === 'string') {
    const ms = Date.parse(`${copy.processed_at}Z`);
    if (!Number.isNaN(ms)) copy.processed_at = new Date(ms + 60_000).toISOString().slice(0, 19);
  }
  return copy as N;
}

/**
 * The two notifications of a 3-D Secure payment in the wrong order: `success` arrives before `pending`.
 * Post them in array order; a receiver with a `ledger` (`createPaymentLedger`) answers the late pending one as stale.
 * In a scenario: `hold` on the `create` and `threeDs` steps, then `release: { reverse: true }`.
 *
 * @example
 * const [done, pending] = outOfOrder(fakePurchase());
 * (await postWebhook(app, done, { secret })).expectHandled();
 * (await postWebhook(app, pending, { secret })).expectOutcome('stale');
 */
export function outOfOrder<N extends FakePrimary>(notification: N): [successful: N, pending: N] {
  return [success(notification), threeDsPending(notification)];
}

/**
 * `count` exact copies of one notification, to post concurrently: exactly one must be handled. In a scenario:
 * `redeliver: { payment, count }`.
 *
 * @example
 * const answers = await Promise.all(burst(fakePurchase(), 10).map((n) => postWebhook(app, n, { secret })));
 * answers.filter((a) => a.outcome === 'handled').length; // 1
 */
export function burst<N extends object>(notification: N, count: number): N[] {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`[@payhook/testing] burst count must be a positive integer, not ${count}.`);
  }
  return Array.from({ length: count }, () => structuredClone(notification));
}
