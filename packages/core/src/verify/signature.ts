import { nodeCrypto } from '../runtime/builtins.js';
import {
  base64UrlOf,
  canonicalDigest,
  concatBytes,
  plusForSpaceBytes,
  utf8Bytes,
  withPadding,
} from '../runtime/bytes.js';
import { isPromiseLike } from '../runtime/promise.js';
import { sha1, sha256 } from '../runtime/sha.js';
import {
  checkSecretOption,
  resolveSecrets,
  type Secret,
  type SecretList,
  type SecretResolver,
  type SecretSource,
  type Secrets,
} from './secrets.js';

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

export interface SignatureOptions {
  /**
   * The digest. Never a fallback: a project that signs with SHA-1 must say so.
   * @default 'sha256'
   */
  algorithm?: SignatureAlgorithm;
}

/** Which secret matched (`index` in the list, and its `id` when named), or why nothing did. */
export type VerifyResult =
  | { readonly valid: true; readonly index: number; readonly id: string | undefined }
  | { readonly valid: false; readonly reason: 'malformed' | 'mismatch' | 'no_secret' };

const DIGEST_BYTES: Record<SignatureAlgorithm, number> = { sha256: 32, sha1: 20 };

export function checkAlgorithm(algorithm: unknown): SignatureAlgorithm {
  if (algorithm === undefined) return 'sha256';
  if (algorithm === 'sha256' || algorithm === 'sha1') return algorithm;
  throw new TypeError(
    `[@payhook/core] algorithm must be 'sha256' or 'sha1', not ${JSON.stringify(algorithm)}.`,
  );
}
const MALFORMED: VerifyResult = { valid: false, reason: 'malformed' };
const MISMATCH: VerifyResult = { valid: false, reason: 'mismatch' };
const NO_SECRET: VerifyResult = { valid: false, reason: 'no_secret' };

/**
 * Signs `data` (the base64url string exactly as it will be sent) with the spec's formula:
 * `base64url(sha256(secret + data + secret))`, padding kept, 44 characters (28 with `sha1`).
 *
 * @example
 * const data = encodeBase64Url(JSON.stringify(notification));
 * const body = new URLSearchParams({ data, signature: sign(data, process.env.WEBHOOK_SECRET!) });
 */
export function sign(data: string, secret: string, options?: SignatureOptions): string {
  return withPadding(digestBase64Url(options?.algorithm ?? 'sha256', data, secret));
}

/**
 * A received signature as the canonical unpadded base64url of its digest (every spelling `canonicalDigest`
 * tolerates), or `undefined` when it cannot be a digest of that algorithm.
 */
export function normalizeSignature(
  signature: string,
  algorithm: SignatureAlgorithm = 'sha256',
): string | undefined {
  return canonicalDigest(signature, DIGEST_BYTES[algorithm]);
}

/**
 * Compares two strings of equal length in time that depends on the length only (no early exit), like
 * `timingSafeEqual` without turning the digest into a Buffer.
 */
export function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Compares `expected` (a signature from `normalizeSignature`) with the digest of `data` under each secret, in
 * constant time per secret. Returns the index of the first match, or -1.
 */
export function matchSecret(
  data: string,
  expected: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm = 'sha256',
): number {
  const index = firstMatch(data, expected, secrets, algorithm);
  if (index >= 0 || !data.includes(' ')) return index;
  // A sender that did not escape `+` in standard-base64 data had it turned into a space by form decoding. Hashed
  // as bytes: the same digest as the text's, without building a second string of the data's size.
  return firstMatch(plusForSpaceBytes(data), expected, secrets, algorithm);
}

function firstMatch(
  data: string | Uint8Array,
  expected: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
): number {
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i]!;
    const value = typeof secret === 'string' ? secret : secret.secret;
    if (equalInConstantTime(digestBase64Url(algorithm, data, value), expected)) return i;
  }
  return -1;
}

function resultFor(secrets: readonly Secret[], index: number): VerifyResult {
  if (index < 0) return MISMATCH;
  const secret = secrets[index]!;
  return { valid: true, index, id: typeof secret === 'string' ? undefined : secret.id };
}

/**
 * Checks the `signature` field of a delivery against its `data` field, hashing `data` exactly as received.
 * Takes one secret, several (rotation: the result says which matched), or a resolver by `pos_id` (then the
 * result is a promise, rejected with a `SignatureError` `secret.unavailable` when the resolver throws). A
 * wrong-size signature fails before any hashing.
 *
 * @example
 * const result = verifySignature(form.data, form.signature, [process.env.SECRET_NEW!, process.env.SECRET_OLD!]);
 * if (!result.valid) return reply(401);
 * if (result.index > 0) log.info('delivery still signed with the old secret');
 */
export function verifySignature(
  data: string,
  signature: string,
  secrets: SecretList,
  options?: SignatureOptions,
): VerifyResult;
export function verifySignature(
  data: string,
  signature: string,
  secrets: SecretResolver,
  options?: SignatureOptions,
): Promise<VerifyResult>;
export function verifySignature(
  data: string,
  signature: string,
  secrets: Secrets,
  options?: SignatureOptions,
): VerifyResult | Promise<VerifyResult>;
export function verifySignature(
  data: string,
  signature: string,
  secrets: Secrets,
  options?: SignatureOptions,
): VerifyResult | Promise<VerifyResult> {
  const checked = checkSecretOption(secrets);
  const source: SecretSource =
    typeof checked === 'function' ? (text) => resolveSecrets(checked, text) : checked;
  return checkSignature(data, signature, source, options?.algorithm ?? 'sha256');
}

/**
 * `verifySignature` with secrets already checked (`secretSource`): the handler and `verifyNotification` check
 * theirs once, not on every delivery. A resolver is asked only for a signature that can be a digest.
 */
export function checkSignature(
  data: string,
  signature: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
): VerifyResult;
export function checkSignature(
  data: string,
  signature: string,
  secrets: SecretSource,
  algorithm: SignatureAlgorithm,
): VerifyResult | Promise<VerifyResult>;
export function checkSignature(
  data: string,
  signature: string,
  secrets: SecretSource,
  algorithm: SignatureAlgorithm,
): VerifyResult | Promise<VerifyResult> {
  const checked = checkAgainst(data, signature, secrets, algorithm);
  return isPromiseLike(checked) ? checked.then(({ result }) => result) : checked.result;
}

/** A signature's result, and the secrets it was checked against (a resolver's answer): what a refusal is diagnosed with. */
export interface SignatureCheck {
  readonly result: VerifyResult;
  readonly secrets: readonly Secret[];
}

export function checkAgainst(
  data: string,
  signature: string,
  secrets: SecretSource,
  algorithm: SignatureAlgorithm,
): SignatureCheck | Promise<SignatureCheck> {
  const expected = canonicalDigest(signature, DIGEST_BYTES[algorithm]);
  if (typeof secrets === 'function') {
    if (!expected) return Promise.resolve({ result: MALFORMED, secrets: [] });
    return secrets(data).then((list) => ({
      result: list.length === 0 ? NO_SECRET : resultFor(list, matchSecret(data, expected, list, algorithm)),
      secrets: list,
    }));
  }
  if (!expected) return { result: MALFORMED, secrets };
  const index = matchSecret(data, expected, secrets, algorithm);
  if (index < 0) return { result: MISMATCH, secrets };
  const secret = secrets[index]!;
  return { result: { valid: true, index, id: typeof secret === 'string' ? undefined : secret.id }, secrets };
}
