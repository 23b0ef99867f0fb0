import { RequestError } from '../errors.js';
import { type BodyLimits, getHeader, parseRawBody, readRawBody } from '../http/body.js';
import type { Envelope, MediaType, WebhookRequest } from '../http/request.js';
import { duration, optionError } from '../option-checks.js';
import { base64UrlOf, utf8Bytes } from '../runtime/bytes.js';
import { digestBase64Url, equalInConstantTime } from './signature.js';

// The `X-Payhook-Relay` header of @payhook/relay, read once for both sides: its signed text (the relay signs it)
// and its check (the handler's `relay` option, and `verifyRelayHeader` of @payhook/relay). Web Crypto only: it runs
// only for a webhook given `relay`, on every runtime core runs on.

/** The header every delivery forwarded by @payhook/relay carries. */
export const RELAY_HEADER = 'x-payhook-relay';

/**
 * What the relay says about one delivery it journaled: the channel, its sequence there, when it arrived, the
 * sender's address as the relay saw it, and the SHA-256 of the body (base64url, no padding).
 *
 * @example
 * const forward: RelayForward = await verifyRelayHeader(header, body, process.env.PAYHOOK_RELAY_KEY!);
 * console.log(forward.sender, forward.sequence);
 */
export interface RelayForward {
  /** The relay's channel the delivery was posted to (`/in/<channel>`). */
  readonly channel: string;
  /** Its sequence in the channel, from 1. */
  readonly sequence: number;
  /** When the relay journaled it. */
  readonly receivedAt: Date;
  /** The address that posted it to the relay, as the relay read it (its `trustProxy`). */
  readonly sender: string;
  /** The SHA-256 of the body, base64url without padding. */
  readonly sha256: string;
}

/**
 * The handler's `relay` option: trust the original sender named by a valid `X-Payhook-Relay` header.
 *
 * @example
 * createWebhookHandler({ secret, allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: process.env.PAYHOOK_RELAY_KEY! } });
 */
export interface RelayTrustOptions {
  /** The channel's key, as `payhook relay channel create` printed it; several while rotating. */
  key: string | readonly string[];
  /**
   * Refuse a header whose delivery reached the relay longer ago than this (`relay.header_stale`). A replay
   * (`payhook relay replay`, a client catching up after a weekend) carries the original arrival time, so set it
   * only above the relay's retention, or where no replay is wanted. Compared with this machine's clock: allow for
   * the skew between it and the relay's.
   * @default none: a replayed delivery is answered `duplicate` by the store, as any copy
   */
  maxAgeMs?: number;
}

const VERSION = 'payhook-relay/v1';

/** The text the relay signs for one forward (one field a line, after the version). */
export function relaySignedText(forward: RelayForward): string {
  return [
    VERSION,
    forward.channel,
    forward.sequence,
    forward.receivedAt.getTime(),
    forward.sender,
    forward.sha256,
  ].join('\n');
}

/** The header's value for one forward and its signature (base64url HMAC-SHA256 of `relaySignedText`). */
export function relayHeaderValue(forward: RelayForward, signature: string): string {
  return [
    'v=1',
    `channel=${forward.channel}`,
    `seq=${forward.sequence}`,
    `at=${forward.receivedAt.getTime()}`,
    `sender=${encodeURIComponent(forward.sender)}`,
    `sha256=${forward.sha256}`,
    `sig=${signature}`,
  ].join(';');
}

function refused(code: 'relay.header_invalid', why: string): RequestError {
  return new RequestError(
    code,
    `the ${RELAY_HEADER} header is malformed (${why}): @payhook/relay's client adds it; a request without it did not come through the relay.`,
  );
}

function fieldsOf(header: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (fields.has(name)) throw refused('relay.header_invalid', 'a field is repeated');
    fields.set(name, part.slice(at + 1).trim());
  }
  return fields;
}

function parseRelayHeader(header: string | null | undefined): { forward: RelayForward; signature: string } {
  if (!header) throw refused('relay.header_invalid', 'absent');
  const fields = fieldsOf(header);
  if (fields.get('v') !== '1') throw refused('relay.header_invalid', 'not version 1');
  const sequence = Number(fields.get('seq'));
  const at = Number(fields.get('at'));
  const [channel, sender, digest, signature] = ['channel', 'sender', 'sha256', 'sig'].map((k) =>
    fields.get(k),
  );
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw refused('relay.header_invalid', 'seq');
  if (!Number.isSafeInteger(at)) throw refused('relay.header_invalid', 'at');
  if (!channel || sender === undefined || !digest || !signature)
    throw refused('relay.header_invalid', 'a field is missing');
  let decodedSender: string;
  try {
    decodedSender = decodeURIComponent(sender);
  } catch {
    throw refused('relay.header_invalid', 'sender');
  }
  const forward = { channel, sequence, receivedAt: new Date(at), sender: decodedSender, sha256: digest };
  return { forward, signature };
}

/** HMAC-SHA256 keys imported once (importing costs more than a short message's MAC). */
type Keys = readonly Promise<CryptoKey>[];

function importKeys(keys: string | readonly string[]): Keys {
  return (typeof keys === 'string' ? [keys] : keys).map((key) =>
    crypto.subtle.importKey('raw', utf8Bytes(key) as Uint8Array<ArrayBuffer>, HMAC, false, ['sign']),
  );
}

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;

async function signedByOne(keys: Keys, text: string, signature: string): Promise<boolean> {
  const message = utf8Bytes(text) as Uint8Array<ArrayBuffer>;
  let signed = false;
  for (const key of keys) {
    const mac = base64UrlOf(new Uint8Array(await crypto.subtle.sign('HMAC', await key, message)));
    if (equalInConstantTime(mac, signature)) signed = true;
  }
  return signed;
}

/**
 * Checks a forward's `X-Payhook-Relay` header against the body received and the channel's keys, and returns what
 * the relay saw. The body's SHA-256 must match, so a signed header cannot be moved onto another body.
 *
 * @throws {RequestError} `relay.header_invalid` (absent or malformed), `relay.signature_invalid` (no key signed
 *   it), `relay.body_mismatch` (not the body the relay journaled), `relay.header_stale` (older than `maxAgeMs`).
 * @example
 * const forward = await verifyRelayForward(header, body, process.env.PAYHOOK_RELAY_KEY!);
 */
export function verifyRelayForward(
  header: string | null | undefined,
  body: Uint8Array | string,
  keys: string | readonly string[],
  maxAgeMs?: number,
): Promise<RelayForward> {
  return checkForward(header, body, importKeys(keys), maxAgeMs);
}

async function checkForward(
  header: string | null | undefined,
  body: Uint8Array | string,
  keys: Keys,
  maxAgeMs: number | undefined,
): Promise<RelayForward> {
  const { forward, signature } = parseRelayHeader(header);
  if (!(await signedByOne(keys, relaySignedText(forward), signature))) {
    throw new RequestError(
      'relay.signature_invalid',
      `the ${RELAY_HEADER} header is not signed with this channel's key: check the key printed when the channel was created.`,
    );
  }
  if (!equalInConstantTime(digestBase64Url('sha256', body), forward.sha256)) {
    throw new RequestError(
      'relay.body_mismatch',
      'the body is not the one the relay journaled (its SHA-256 differs): something between the relay and this app changed it.',
    );
  }
  if (maxAgeMs !== undefined && Date.now() - forward.receivedAt.getTime() > maxAgeMs) {
    throw new RequestError(
      'relay.header_stale',
      `the delivery reached the relay more than relay.maxAgeMs (${maxAgeMs} ms) ago.`,
    );
  }
  return forward;
}

/** The handler's check of a forward, its keys imported once. */
export type RelayCheck = (header: string | undefined, body: Uint8Array | string) => Promise<RelayForward>;

/**
 * The `relay` option checked once, when the handler is built: its check of a forward, or `undefined` without it.
 *
 * @example
 * const check = relayCheck({ key: process.env.PAYHOOK_RELAY_KEY! });
 */
export function relayCheck(options: unknown): RelayCheck | undefined {
  if (options === undefined) return undefined;
  const { key, maxAgeMs } = (options ?? {}) as Partial<RelayTrustOptions>;
  const keys = typeof key === 'string' ? [key] : key;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string' && k !== '')) {
    throw optionError('relay.key', "the channel's key (a non-empty string, or several)", key, false);
  }
  const maxAge = maxAgeMs === undefined ? undefined : duration('relay.maxAgeMs', maxAgeMs, 0);
  const imported = importKeys(keys);
  return (header, body) => checkForward(header, body, imported, maxAge);
}

/** A delivery that came through the relay: its envelope and the original sender its header names. */
export interface Relayed {
  readonly envelope: Envelope;
  readonly sender: string;
}

/**
 * With the `relay` option: a delivery carrying the header has it checked against the bytes received (read first,
 * whole), then its envelope read from them; `undefined` for one without it (a direct delivery, read as without the
 * option).
 */
export async function readRelayed(
  request: WebhookRequest,
  type: MediaType,
  limits: BodyLimits,
  check: RelayCheck,
): Promise<Relayed | undefined> {
  const header = getHeader(request.headers, RELAY_HEADER);
  if (header === undefined) return undefined;
  const bytes = await readRawBody(request, limits);
  const forward = await check(header, bytes);
  return { envelope: parseRawBody(bytes, type), sender: forward.sender };
}
