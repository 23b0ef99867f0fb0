import { base64UrlOf } from '../runtime/base64url.js';
import { nodeCrypto } from '../runtime/builtins.js';
import { sha1, sha256 } from '../runtime/sha.js';
import { concatBytes, utf8Bytes } from '../runtime/utf8.js';

/** The digest of the spec's formula. `sha1` only for projects whose service account signs with SHA-1. */
export type SignatureAlgorithm = 'sha256' | 'sha1';

/** One-shot hashing (Node 20.12+), cheaper than `createHash` for one input. */
const oneShot = (
  nodeCrypto as { hash?: (algorithm: string, input: string, encoding: 'base64url') => string } | undefined
)?.hash;

/**
 * The digest of `around + data + around` (text as UTF-8) as unpadded base64url: with `node:crypto` where the
 * runtime has it, with sha.ts elsewhere.
 */
export function digestBase64Url(
  algorithm: SignatureAlgorithm,
  data: string | Uint8Array,
  around = '',
): string {
  if (!nodeCrypto) {
    const hash = algorithm === 'sha1' ? sha1 : sha256;
    if (typeof data === 'string') return base64UrlOf(hash(utf8Bytes(around + data + around)));
    const edge = utf8Bytes(around);
    return base64UrlOf(hash(concatBytes([edge, data, edge], edge.length * 2 + data.length)));
  }
  // Bytes are fed in three updates: no copy of the data into one input.
  if (typeof data !== 'string' || !oneShot) {
    return nodeCrypto.createHash(algorithm).update(around).update(data).update(around).digest('base64url');
  }
  return oneShot(algorithm, around + data + around, 'base64url');
}
