import { createHash } from 'node:crypto';
import { vi } from 'vitest';
import { signedForm } from '../../../test/support/signed-form.ts';
import { purchase, SECRET } from '../../core/test/fixtures.ts';
import type { CreatedChannel, Journal, Relay, RelayOptions } from '../src/index.js';
import { createRelay } from '../src/index.js';

export { SECRET };
export const ADMIN = 'admin-token-for-tests-0123456789';
export const SIGNING_SECRET = 'signing-secret-for-tests-0123456789abcdef';
export const SERVICE = '35.187.74.148';
export const FORM = 'application/x-www-form-urlencoded';
export const ORIGIN = 'http://relay.test';

/** A relay over `journal` with the test secrets and no log output. */
export function relayOver(journal: Journal, options: Partial<RelayOptions> = {}): Relay {
  return createRelay({
    journal,
    adminToken: ADMIN,
    signingSecret: SIGNING_SECRET,
    logger: false,
    ...options,
  });
}

/** Creates a channel through the admin route; its answer (token and key). */
export async function channel(relay: Relay, name: string): Promise<CreatedChannel> {
  const response = await relay.fetch(
    new Request(`${ORIGIN}/channels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    }),
  );
  if (response.status !== 201)
    throw new Error(`channel ${name}: ${response.status} ${await response.text()}`);
  return (await response.json()) as CreatedChannel;
}

/** The service's delivery of purchase `n`: a signed form body with its own order id. */
export function delivery(n: number, secret = SECRET): string {
  return signedForm(purchase({ order_id: `order-${n}`, payment_id: `pay-${n}` }), secret);
}

/** Posts a body to `/in/<name>` as the service does, from `sender`. */
export function deliver(
  relay: Relay,
  name: string,
  body: string | Uint8Array,
  sender = SERVICE,
  headers: Record<string, string> = { 'content-type': FORM },
): Promise<Response> {
  return relay.fetch(
    new Request(`${ORIGIN}/in/${name}`, { method: 'POST', headers, body: body as BodyInit }),
    { remoteAddress: sender },
  );
}

/** A long-poll read of a channel with `token`. */
export function poll(
  relay: Relay,
  name: string,
  token: string | undefined,
  query = 'after=0',
): Promise<Response> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  return relay.fetch(new Request(`${ORIGIN}/out/${name}/events?${query}`, { headers }));
}

/** SHA-256 as base64url without padding, by node:crypto (independent of the relay's Web Crypto). */
export function digest(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('base64url');
}

/**
 * The timers a test fakes (and never advances, or advances itself) so that only the behaviour under test can settle
 * a promise: a stream's poll and heartbeat, a long-poll's wait, a write's deadline. `setImmediate` stays real: it
 * counts the event loop's turns (`within`).
 */
export const TIMERS = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] as const;

/**
 * `promise`'s value if it settles within `turns` turns of the event loop, else a rejection: a count of turns, not a
 * wall-clock bound, and with timers faked nothing but the code under test can settle it. Thousands of turns, not
 * a hundred: Web Crypto's digests and signatures run on libuv's threads, which a loaded machine makes take many
 * turns (100 once failed in the full suite).
 */
export async function within<T>(promise: Promise<T>, turns = 5_000): Promise<T> {
  const late = Symbol('late');
  const waited = (async () => {
    for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
    return late;
  })();
  const value = await Promise.race([promise, waited]);
  if (value === late) throw new Error(`not settled within ${turns} turns of the event loop`);
  return value as T;
}

/**
 * Resolves once the code under test has set a (faked) timer, counted in turns of the event loop: before a test
 * advances the clock past a wait, the wait must exist (a read that still hashes its token on a loaded machine has
 * not set it yet).
 */
export async function untilTimerSet(turns = 10_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (vi.getTimerCount() > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`no timer was set within ${turns} turns of the event loop`);
}
