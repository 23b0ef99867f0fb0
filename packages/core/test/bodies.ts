import { randomUUID } from 'node:crypto';
import { signedForm } from '../../../test/support/signed-form.ts';
import { formBody, purchase } from './fixtures.js';

/** The secret the store tests sign with. */
export const STORE_SECRET = 'store-test-secret';

/** A signed form body for a purchase success of `paymentId` (a new one per distinct notification). */
export function signedPurchase(paymentId: string = randomUUID(), secret = STORE_SECRET): string {
  const notification = {
    payment_id: paymentId,
    order_id: `order-${paymentId.slice(0, 8)}`,
    pos_id: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
    mode: 'direct',
    method: 'purchase',
    amount: 10,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    created_at: '2026-11-22T10:15:00',
    processed_at: '2026-11-22T10:15:03',
  };
  return signedForm(notification, secret);
}

/** The key core's `notificationKey` computes for `signedPurchase(paymentId)`. */
export function purchaseKey(paymentId: string): string {
  return `${paymentId}:purchase:success:1000`;
}

/** A recurring charge: it reaches `purchase.success`, `purchase`, `recurring.success`, `recurring` and `onAny`. */
export function recurringCharge(overrides: Record<string, unknown> = {}): string {
  return formBody(
    purchase({
      payment_id: randomUUID(),
      transaction_id: randomUUID(),
      recurring: { id: 'sub-1', status: 'active' },
      ...overrides,
    }),
    STORE_SECRET,
  );
}
