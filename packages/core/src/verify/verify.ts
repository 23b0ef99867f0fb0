import { SignatureError } from '../errors.js';
import { type Envelope, envelopeFromObject, parseRawBody } from '../http/body.js';
import { notificationFromData } from '../notification/parse.js';
import type { Notification } from '../notification/types.js';
import { isPromiseLike } from '../runtime/promise.js';
import {
  type Secret,
  type SecretList,
  type SecretResolver,
  type SecretSource,
  type Secrets,
  secretSource,
} from './secrets.js';
import {
  checkAlgorithm,
  checkSignature,
  type SignatureAlgorithm,
  type SignatureOptions,
  type VerifyResult,
} from './signature.js';

/** What `verifyNotification` reads: the raw body as received (form or JSON, text or bytes), or its two fields. */
export type NotificationInput = string | Uint8Array | Envelope;

/** Which secret a verified delivery was signed with. */
type MatchedSecret = Extract<VerifyResult, { valid: true }>;

/** A delivery whose signature matched: its typed notification, and the secret that matched. */
export interface VerifiedEnvelope {
  readonly notification: Notification;
  readonly secret: MatchedSecret;
}

/**
 * The secret that matched, else throws the `SignatureError` the handler answers: `secret.not_found` when a
 * resolver had none for the delivery's `pos_id`, else `signature.invalid`.
 */
function matchedSecretOrThrow(result: VerifyResult, algorithm: SignatureAlgorithm): MatchedSecret {
  if (result.valid) return result;
  if (result.reason === 'no_secret') {
    throw new SignatureError('secret.not_found', 'no secret is configured for the pos_id of this delivery.');
  }
  throw new SignatureError(
    'signature.invalid',
    result.reason === 'malformed'
      ? `the signature is not a ${algorithm} digest in base64url: check the algorithm option and that the field was not altered.`
      : 'the signature does not match the data under any configured secret: check the secret (test and live projects differ) and that data is passed exactly as received.',
  );
}

function verifiedEnvelope(
  envelope: Envelope,
  result: VerifyResult,
  algorithm: SignatureAlgorithm,
): VerifiedEnvelope {
  const secret = matchedSecretOrThrow(result, algorithm);
  return { secret, notification: notificationFromData(envelope.data) };
}

/**
 * A delivery's envelope → its verified notification: the signature checked, then `data` decoded and parsed; every
 * refusal thrown (or, with a resolver, rejected). The one sequence of the handler and `verifyNotification`,
 * synchronous unless a resolver is asked: the handler awaits only a promise.
 */
export function verifyEnvelope(
  envelope: Envelope,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
): VerifiedEnvelope;
export function verifyEnvelope(
  envelope: Envelope,
  secrets: SecretSource,
  algorithm: SignatureAlgorithm,
): VerifiedEnvelope | Promise<VerifiedEnvelope>;
export function verifyEnvelope(
  envelope: Envelope,
  secrets: SecretSource,
  algorithm: SignatureAlgorithm,
): VerifiedEnvelope | Promise<VerifiedEnvelope> {
  const result = checkSignature(envelope.data, envelope.signature, secrets, algorithm);
  return isPromiseLike(result)
    ? result.then((resolved) => verifiedEnvelope(envelope, resolved, algorithm))
    : verifiedEnvelope(envelope, result, algorithm);
}

/** `{` after optional whitespace: a JSON envelope (no form body starts with it; the handler goes by Content-Type). */
const JSON_START = /^\s*\{/;

function envelopeOf(input: NotificationInput): Envelope {
  if (typeof input === 'string') return parseRawBody(input, JSON_START.test(input) ? 'json' : 'form');
  if (input instanceof Uint8Array) return parseRawBody(input, startsJson(input) ? 'json' : 'form');
  if (input === null || typeof input !== 'object') {
    throw new TypeError(
      '[@payhook/core] verifyNotification takes the raw form body (a string or bytes) or { data, signature }.',
    );
  }
  return envelopeFromObject(input);
}

function startsJson(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte === 0x7b) return true;
    // Space, tab, line feed, carriage return.
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  }
  return false;
}

/**
 * Verifies one delivery and returns its typed notification, for code that does not use the handler (a queue
 * consumer, a serverless function that stores the body first), as Stripe's `constructEvent`. The same steps as
 * the handler, with the same errors: the form body is read as the handler reads it (`+` sent unescaped and
 * turned into a space is tolerated), the signature checked in constant time against every secret (rotation: the
 * current first), then `data` decoded and parsed. No duplicate detection: that is the handler's.
 *
 * With a resolver of secrets by `pos_id` the result is a promise, and every refusal a rejection.
 *
 * @throws {RequestError} `payload.field_missing`, `payload.field_repeated` or `payload.malformed`: the body is not a
 *   delivery's envelope.
 * @throws {SignatureError} `signature.invalid`; from a resolver, `secret.not_found` (it had no secret) or
 *   `secret.unavailable` (it threw).
 * @throws {PayloadError} `data.encoding_invalid`, `data.json_invalid`, `data.not_object` or `notification.invalid`.
 * @example
 * const notification = verifyNotification(rawBody, [process.env.WEBHOOK_SECRET!, process.env.OLD_SECRET!]);
 * if (notification.kind === 'primary' && notification.status === 'success') await fulfil(notification.order_id);
 */
export function verifyNotification(
  input: NotificationInput,
  secrets: SecretList,
  options?: SignatureOptions,
): Notification;
export function verifyNotification(
  input: NotificationInput,
  secrets: SecretResolver,
  options?: SignatureOptions,
): Promise<Notification>;
export function verifyNotification(
  input: NotificationInput,
  secrets: Secrets,
  options?: SignatureOptions,
): Notification | Promise<Notification>;
export function verifyNotification(
  input: NotificationInput,
  secrets: Secrets,
  options?: SignatureOptions,
): Notification | Promise<Notification> {
  const algorithm = checkAlgorithm(options?.algorithm);
  const source = secretSource(secrets);
  if (typeof source === 'function') {
    return (async () => (await verifyEnvelope(envelopeOf(input), source, algorithm)).notification)();
  }
  return verifyEnvelope(envelopeOf(input), source, algorithm).notification;
}
