import { randomUUID } from 'node:crypto';
import { encodeBase64Url } from '../src/base64url.js';
import { sign } from '../src/signature.js';

/** The secret the store tests sign with. */
export const STORE_SECRET = 'store-test-secret';

/** A signed form body for a purchase success of `paymentId` (a new one per distinct notification). */
export function signedPurchase(paymentId: string = randomUUID(), secret = STORE_SECRET): string {
  const data = encodeBase64Url(
    JSON.stringify({
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
    }),
  );
  return new URLSearchParams({ data, signature: sign(data, secret) }).toString();
}

/** The key core's `notificationKey` computes for `signedPurchase(paymentId)`. */
export function purchaseKey(paymentId: string): string {
  return `${paymentId}:purchase:success:1000`;
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;

/** A `WebhookRequest` carrying `body` as the raw text a framework kept. */
export function formRequest(body: string) {
  return { method: 'POST', headers: { ...FORM }, body };
}

/** POSTs a delivery; resolves the status and the parsed JSON body. */
export async function post(
  url: string,
  body: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: FORM, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs `tasks` with at most `limit` at a time, keeping results in order. */
export async function pool<T>(limit: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  });
  await Promise.all(workers);
  return results;
}
