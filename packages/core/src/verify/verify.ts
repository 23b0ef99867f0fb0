import { SignatureError, WebhookError } from '../errors.js';
import { parseRawBody } from '../http/body.js';
import { envelopeFromObject } from '../http/envelope.js';
import type { Envelope } from '../http/request.js';
import { notificationFromData } from '../notification/parse.js';
import type { Notification } from '../notification/types.js';
import { diagnoseSignature } from './diagnosis.js';
import {
  type Secret,
  type SecretList,
  type SecretResolver,
  type SecretSource,
  type Secrets,
  secretSource,
} from './secrets.js';
import {
  checkAgainst,
  checkAlgorithm,
  type SignatureAlgorithm,
  type SignatureCheck,
  type SignatureOptions,
  type VerifyResult,
} from './signature.js';

/** What `verifyNotification` reads: the raw body as received (form or JSON, text or bytes), or its two fields. */
export type NotificationInput = string | Uint8Array | Envelope;

/** Which secret a verified delivery was signed with. */
export type MatchedSecret = Extract<VerifyResult, { valid: true }>;

/** A delivery whose signature matched: its typed notification, and the secret that matched. */
export interface VerifiedEnvelope {
  readonly notification: Notification;
  readonly secret: MatchedSecret;
}

/**
 * The `SignatureError` the handler answers a refused signature with: `secret.not_found` when a resolver had no
 * secret for the delivery's `pos_id`, else `signature.invalid`; with its `hint`, which never changes the answer.
 * `mayHash`: see `diagnoseSignature` (the process's budget unless given).
 */
function signatureRefusal(
  envelope: Envelope,
  result: Exclude<VerifyResult, { valid: true }>,
  check: SignatureCheck,
  source: SecretSource,
  algorithm: SignatureAlgorithm,
  mayHash?: () => boolean,
): SignatureError {
  const others = typeof source === 'function' ? (source.recent?.() ?? []) : [];
  const hint = diagnoseSignature(envelope, check.secrets, algorithm, { others, mayHash });
  if (result.reason === 'no_secret') {
    return new SignatureError(
      'secret.not_found',
      'no secret is configured for the pos_id of this delivery.',
      { hint },
    );
  }
  return new SignatureError(
    'signature.invalid',
    result.reason === 'malformed'
      ? `the signature is not a ${algorithm} digest in base64url: check the algorithm option and that the field was not altered.`
      : 'the signature does not match the data under any configured secret: check the secret (test and live projects differ) and that data is passed exactly as received.',
    { hint },
  );
}

function verifiedEnvelope(
  envelope: Envelope,
  check: SignatureCheck,
  source: SecretSource,
  algorithm: SignatureAlgorithm,
): VerifiedEnvelope {
  const { result } = check;
  if (!result.valid) throw signatureRefusal(envelope, result, check, source, algorithm);
  return { secret: result, notification: notificationFromData(envelope.data) };
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
  const check = checkAgainst(envelope.data, envelope.signature, secrets, algorithm);
  if (check instanceof Promise) {
    return check.then((resolved) => verifiedEnvelope(envelope, resolved, secrets, algorithm));
  }
  const { result } = check as SignatureCheck;
  if (!result.valid) throw signatureRefusal(envelope, result, check as SignatureCheck, secrets, algorithm);
  return { secret: result, notification: notificationFromData(envelope.data) };
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

/**
 * The handler's verdict on one delivery's body, for tools that must agree with it (`payhook verify --explain`):
 * the envelope as the handler reads it, the secret its signature matched, the notification, or the refusal the
 * handler answers (a `SignatureError` with its `hint`). The same readers and checks as the handler, in the same
 * order; a refusal is returned, not thrown. A form body is read as a form and one starting with `{` as JSON, as
 * `verifyNotification` reads it.
 *
 * @example
 * const { error } = await explainDelivery(readFileSync('body.txt'), process.env.WEBHOOK_SECRET!);
 * if (error instanceof SignatureError) console.log(error.code, error.hint);
 */
export async function explainDelivery(
  input: NotificationInput,
  secrets: Secrets,
  options?: SignatureOptions,
): Promise<DeliveryExplanation> {
  const algorithm = checkAlgorithm(options?.algorithm);
  const source = secretSource(secrets);
  let envelope: Envelope;
  try {
    envelope = envelopeOf(input);
  } catch (error) {
    return refused(undefined, undefined, error);
  }
  let check: SignatureCheck;
  try {
    check = await checkAgainst(envelope.data, envelope.signature, source, algorithm);
  } catch (error) {
    return refused(envelope, undefined, error);
  }
  const { result } = check;
  if (!result.valid) {
    // A person asked: diagnosed in full, whatever the process's budget for refusals.
    const refusal = signatureRefusal(envelope, result, check, source, algorithm, () => true);
    return refused(envelope, undefined, refusal);
  }
  try {
    const notification = notificationFromData(envelope.data);
    return { envelope, secret: result, notification, error: undefined };
  } catch (error) {
    return refused(envelope, result, error);
  }
}

function refused(
  envelope: Envelope | undefined,
  secret: MatchedSecret | undefined,
  error: unknown,
): DeliveryExplanation {
  if (!(error instanceof WebhookError)) throw error;
  return { envelope, secret, notification: undefined, error };
}

/**
 * What `explainDelivery` found.
 *
 * @example
 * const { secret, error } = await explainDelivery(body, secrets);
 * console.log(secret ? `signed with secret #${secret.index}` : `refused: ${error?.code}`);
 */
export interface DeliveryExplanation {
  /** `data` and `signature` as the handler reads them; `undefined` when the body is not an envelope (see `error`). */
  readonly envelope: Envelope | undefined;
  /** The secret the signature matched; `undefined` when it matched none. */
  readonly secret: MatchedSecret | undefined;
  /** The verified notification, when the handler would take it. */
  readonly notification: Notification | undefined;
  /** The refusal the handler answers instead, when it refuses. */
  readonly error: WebhookError | undefined;
}
