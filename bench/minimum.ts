import { createHash, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import { type MemoryStore, parseNotification } from '@payhook/core';

/**
 * The hand-written minimum a merchant could write from spec part 5: hash, compare in constant time, decode,
 * parse. The floor every payhook row is compared with.
 */
export function handWrittenMinimum(data: string, signature: string, secret: string): unknown {
  const digest = createHash('sha256')
    .update(secret + data + secret)
    .digest();
  const expected = Buffer.from(signature, 'base64url');
  if (expected.length !== digest.length || !timingSafeEqual(digest, expected))
    throw new Error('bad signature');
  return JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
}

/**
 * The hand-written minimum doing what the handler does with a delivery: the form read by `node:querystring` (Node's
 * own form parser; `URLSearchParams` costs about as much), the minimum's verify, decode and parse, the typed
 * notification (`parseNotification`), and the notification's key claimed and committed in a `MemoryStore`. The
 * like-for-like floor under the full handler's micro row.
 */
export function handWrittenHandling(body: Buffer, secret: string, store: MemoryStore): void {
  const { data, signature } = parseQuery(body.toString());
  if (typeof data !== 'string' || typeof signature !== 'string')
    throw new Error('not one data and signature');
  const raw = handWrittenMinimum(data, signature, secret);
  const n = parseNotification(raw as Record<string, unknown>);
  const key = `${n.payment_id}:${n.method}:${n.status}:${n.status_code ?? ''}`;
  const claim = store.claim(key, 60_000);
  if (claim.status !== 'claimed') throw new Error(`MemoryStore answered ${claim.status}`);
  store.commit(key, claim.token, 604_800_000);
}
