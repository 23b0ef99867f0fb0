import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { signedForm } from '../../../test/support/signed-form.ts';
import type { DedupeStore, TransactionalStore } from '../src/dedupe.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../src/handler.js';
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

/**
 * The two concurrency checks every store must pass: of 64 concurrent claims of one key exactly one is granted, and
 * 64 concurrent copies of one delivery through the handler run the application handler once. Resolves with the
 * key the handler committed, for the store-specific check that it is marked done.
 */
export async function expectOnceUnderConcurrency(store: DedupeStore): Promise<string> {
  const key = randomUUID();
  const claims = await Promise.all(Array.from({ length: 64 }, () => store.claim(key, 60_000)));
  expect(claims.filter((r) => r.status === 'claimed')).toHaveLength(1);
  expect(claims.filter((r) => r.status === 'in_flight')).toHaveLength(63);

  const paymentId = randomUUID();
  const seen: string[] = [];
  const webhook = createWebhookHandler({
    secret: STORE_SECRET,
    store,
    logger: false,
    handle: async (n) => {
      seen.push(n.payment_id);
      await new Promise((resolve) => setTimeout(resolve, 10));
    },
  });
  const body = signedPurchase(paymentId);
  const results = await Promise.all(Array.from({ length: 64 }, () => webhook(formRequest(body), undefined)));
  expect(seen).toEqual([paymentId]);
  expect(results.map((r) => r.status)).toEqual(Array(64).fill(200));
  expect(results.filter((r) => r.body === '{"ok":true,"outcome":"handled"}')).toHaveLength(1);
  expect(results.filter((r) => r.body === '{"ok":true,"outcome":"duplicate"}')).toHaveLength(63);
  return purchaseKey(paymentId);
}

export const HANDLED = '{"ok":true,"outcome":"handled"}';
export const DUPLICATE = '{"ok":true,"outcome":"duplicate"}';

/** A promise the test settles: a gate a handler waits on. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

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

/** The options every store test starts from: the store under test, its secret, no logging. */
export function base(store: DedupeStore | TransactionalStore): WebhookHandlerOptions {
  return { secret: STORE_SECRET, store, logger: false };
}

/** Claims `key`, lets that lease run out (`expire`), and claims it again: the stale claim and the current one. */
export async function takeOver(
  store: DedupeStore,
  key: string,
  expire: (key: string) => Promise<unknown>,
): Promise<{ stale: { token: string; fence?: number }; current: { token: string; fence?: number } }> {
  const stale = await store.claim(key, 60_000);
  if (stale.status !== 'claimed') throw new Error('expected a claim');
  await expire(key);
  const current = await store.claim(key, 60_000);
  if (current.status !== 'claimed') throw new Error('expected a takeover');
  return { stale, current };
}

/** The fences of three claims of one new key, each lease let run out (`expire`) before the next claim. */
export async function fencesOfTakeovers(store: DedupeStore, expire: (key: string) => Promise<unknown>) {
  const key = randomUUID();
  const fences: (number | undefined)[] = [];
  for (let i = 0; i < 3; i++) {
    const claim = await store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    fences.push(claim.fence);
    await expire(key);
  }
  return fences;
}
