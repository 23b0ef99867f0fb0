import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createWebhookHandler } from '../src/handler.js';
import type { WebhookHandlerOptions } from '../src/options.js';
import type { DedupeStore } from '../src/stores/contract.js';
import { purchaseKey, STORE_SECRET, signedPurchase } from './bodies.js';
import { formRequest } from './deliveries.js';

/**
 * The two concurrency checks every store must pass: of 64 concurrent claims of one key exactly one is granted, and
 * 64 concurrent copies of one delivery through the handler run the application handler once. Resolves with the
 * key the handler committed, for the store-specific check that it is marked done. `bounds`: the handler's, where
 * the store sits behind something slow on a loaded machine (a pooler shared by every test file).
 */
export async function expectOnceUnderConcurrency(
  store: DedupeStore,
  bounds: Pick<WebhookHandlerOptions, 'storeTimeoutMs' | 'inFlightWaitMs'> = {},
): Promise<string> {
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
    ...bounds,
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

/**
 * Claims a new key, lets that lease run out (`expire`) with nobody taking it over, and commits with the lapsed
 * claim's token: the key, that token, and what the commit answered.
 */
export async function commitAfterLapse(
  store: DedupeStore,
  expire: (key: string) => Promise<unknown>,
): Promise<{ key: string; token: string; committed: boolean | undefined }> {
  const key = randomUUID();
  const claim = await store.claim(key, 60_000);
  if (claim.status !== 'claimed') throw new Error('expected a claim');
  await expire(key);
  const committed = (await store.commit(key, claim.token, 60_000)) ?? undefined;
  return { key, token: claim.token, committed };
}

/** `inner` with the calls in `calls` replaced (a store that is slow, or unreachable, in one way). */
export function wrapStore(inner: DedupeStore, calls: Partial<DedupeStore>): DedupeStore {
  return {
    name: inner.name,
    claim: (key, leaseMs) => inner.claim(key, leaseMs),
    renew: (key, token, leaseMs) => inner.renew(key, token, leaseMs),
    commit: (key, token, ttlMs) => inner.commit(key, token, ttlMs),
    release: (key, token) => inner.release(key, token),
    ...calls,
  };
}
