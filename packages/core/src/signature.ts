import * as crypto from 'node:crypto';
import { canonicalDigest, plusForSpaceBytes } from './base64url.js';
import { hasAtMostJsonValues } from './body.js';
import { decodeDataText, parseDataJson } from './decode.js';
import { SignatureError } from './errors.js';

/** The digest of the spec's formula. `sha1` only for projects whose service account signs with SHA-1. */
export type SignatureAlgorithm = 'sha256' | 'sha1';

/** A secret, optionally named so a match can be reported by name (rotation). */
export type Secret = string | { readonly id: string; readonly secret: string };

/** One secret, or several accepted at once while rotating (the first is the current one). */
export type SecretList = Secret | readonly Secret[];

/**
 * Picks the secrets of a project by its `pos_id` (test and live projects have separate secrets). The `pos_id`
 * comes from data whose signature is not yet checked: use it only to choose, never to trust.
 */
export type SecretResolver = (
  posId: string | undefined,
) => SecretList | undefined | Promise<SecretList | undefined>;

/** What `verifySignature` and the handler accept as `secret`. */
export type Secrets = SecretList | SecretResolver;

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

/** The `algorithm` option, `'sha256'` when absent; anything but `'sha256'` or `'sha1'` throws a TypeError. */
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

/** One-shot hashing (Node 20.12+): a third of `createHash`'s cost for a notification-sized input. */
const oneShot = (crypto as { hash?: (algorithm: string, input: string, encoding: 'base64url') => string })
  .hash;

/**
 * The spec's digest of `data` (text, or its UTF-8 bytes) as unpadded base64url: the canonical form
 * `normalizeSignature` compares with.
 */
function digestText(algorithm: SignatureAlgorithm, secret: string, data: string | Buffer): string {
  // Bytes are fed in three updates: no copy of the data into one input.
  if (typeof data !== 'string' || !oneShot) {
    return crypto.createHash(algorithm).update(secret).update(data).update(secret).digest('base64url');
  }
  return oneShot(algorithm, secret + data + secret, 'base64url');
}

/**
 * Signs `data` (the base64url string exactly as it will be sent) with the spec's formula:
 * `base64url(sha256(secret + data + secret))`, padding kept, 44 characters (28 with `sha1`).
 *
 * @example
 * const data = encodeBase64Url(JSON.stringify(notification));
 * const body = new URLSearchParams({ data, signature: sign(data, process.env.WEBHOOK_SECRET!) });
 */
export function sign(data: string, secret: string, options?: SignatureOptions): string {
  const algorithm = options?.algorithm ?? 'sha256';
  const text = digestText(algorithm, secret, data);
  return text.length % 4 === 0 ? text : text + '='.repeat(4 - (text.length % 4));
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
function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function describeValue(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'object') return 'an object without a secret property';
  return `a ${typeof value}`;
}

function secretError(where: string, value: unknown): TypeError {
  const unset = value === undefined || value === null || value === '';
  return new TypeError(
    `[@payhook/core] ${where} is ${describeValue(value)}: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id.${
      unset
        ? ' If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.'
        : ''
    }`,
  );
}

/** `value` as a `Secret`, or a TypeError naming `where()` (built only then: this runs on every verification). */
function checkSecret(value: unknown, where: () => string): Secret {
  if (typeof value === 'string' && value !== '') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'secret' in value) {
    const { secret } = value;
    if (typeof secret === 'string' && secret !== '') return value as Secret;
    throw secretError(`the secret property of ${where()}`, secret);
  }
  throw secretError(where(), value);
}

/**
 * Checks the `secret` option once, when a handler is built: returns a resolver as given, or the static secrets as
 * a non-empty list of non-empty strings and `{ id, secret }` objects. Anything else (`undefined` from an unset
 * environment variable read as `process.env.WEBHOOK_SECRET!`, `null`, `''`, a number, an object without
 * `secret`, an empty array, an array holding any of these) throws a `TypeError` that names the option, the item
 * and the likely cause, instead of a TypeError from deep inside the first delivery.
 */
export function checkSecretOption(value: unknown): SecretResolver | readonly Secret[] {
  if (typeof value === 'function') return value as SecretResolver;
  if (!Array.isArray(value)) return [checkSecret(value, () => 'the secret option')];
  if (value.length === 0) throw secretError('the secret option', value);
  for (let i = 0; i < value.length; i++) checkSecret(value[i], () => `item ${i} of the secret option`);
  return value as readonly Secret[];
}

/** The list form of any `SecretList`. */
export function toSecretArray(secrets: SecretList): readonly Secret[] {
  return typeof secrets === 'string' || !Array.isArray(secrets) ? [secrets as Secret] : secrets;
}

function secretValue(secret: Secret): string {
  return typeof secret === 'string' ? secret : secret.secret;
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
  data: string | Buffer,
  expected: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
): number {
  for (let i = 0; i < secrets.length; i++) {
    if (equalInConstantTime(digestText(algorithm, secretValue(secrets[i]!), data), expected)) return i;
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
  const algorithm = options?.algorithm ?? 'sha256';
  const expected = normalizeSignature(signature, algorithm);
  if (typeof secrets === 'function') {
    if (!expected) return Promise.resolve(MALFORMED);
    return resolveSecrets(secrets, data).then((list) =>
      list.length === 0 ? NO_SECRET : resultFor(list, matchSecret(data, expected, list, algorithm)),
    );
  }
  const list = checkSecretOption(secrets) as readonly Secret[];
  if (!expected) return MALFORMED;
  return resultFor(list, matchSecret(data, expected, list, algorithm));
}

/**
 * The most JSON values unverified data may hold for its `pos_id` to be read: a notification has about fifty, and
 * JSON.parse of a megabyte of tiny values costs forty times that of a megabyte of text.
 */
const MAX_UNVERIFIED_VALUES = 10_000;

/** `pos_id` from unverified data, to choose secrets only; `undefined` when it cannot be read cheaply. */
function unverifiedPosId(data: string): string | undefined {
  try {
    const json = decodeDataText(data);
    if (!hasAtMostJsonValues(json, MAX_UNVERIFIED_VALUES)) return undefined;
    const value = parseDataJson(json).pos_id;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads `pos_id` from unverified data (to choose secrets only) and asks the resolver. A resolver that throws or
 * rejects (its database is down) is `secret.unavailable`: nothing was verified, and the service's retry may find
 * the secrets.
 */
export async function resolveSecrets(resolver: SecretResolver, data: string): Promise<readonly Secret[]> {
  let found: SecretList | undefined;
  try {
    found = await resolver(unverifiedPosId(data));
  } catch (cause) {
    const message = 'the secret resolver failed, so the signature could not be checked.';
    throw new SignatureError('secret.unavailable', message, { cause });
  }
  if (found === undefined) return [];
  return toSecretArray(found).map((secret, index) =>
    checkSecret(secret, () => `item ${index} of what the secret resolver returned`),
  );
}
