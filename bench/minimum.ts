import { createHash, timingSafeEqual } from 'node:crypto';

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
