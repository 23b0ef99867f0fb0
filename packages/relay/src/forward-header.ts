import { hmac, sameText, sha256 } from './crypto.js';
import { RelayError } from './errors.js';

/** The header every forwarded delivery carries: what the relay saw, signed with the channel's key. */
export const RELAY_HEADER = 'x-payhook-relay';

/**
 * What the relay says about one delivery it journaled: the channel, its sequence there, when it arrived, the
 * sender's address as the relay saw it, and the SHA-256 of the body (base64url, no padding).
 *
 * @example
 * const forward: RelayForward = await verifyRelayHeader(header, body, process.env.RELAY_KEY!);
 * console.log(forward.sender, forward.sequence);
 */
export interface RelayForward {
  readonly channel: string;
  readonly sequence: number;
  readonly receivedAt: Date;
  readonly sender: string;
  readonly sha256: string;
}

const VERSION = 'payhook-relay/v1';

function signedText(forward: RelayForward): string {
  return [
    VERSION,
    forward.channel,
    forward.sequence,
    forward.receivedAt.getTime(),
    forward.sender,
    forward.sha256,
  ].join('\n');
}

/**
 * The key a channel's forwards are signed with: HMAC-SHA256 of the channel's name under the relay's signing
 * secret. The relay keeps only the secret; each application gets its own channel's key, which signs nothing
 * for another channel.
 *
 * @example
 * const key = await channelKey(process.env.PAYHOOK_RELAY_SIGNING_SECRET!, 'alice');
 */
export function channelKey(signingSecret: string, channel: string): Promise<string> {
  return hmac(signingSecret, `${VERSION}/channel/${channel}`);
}

/** The header's value for one forward, signed with the channel's key (text, or imported once with `hmacKey`). */
export async function signRelayHeader(forward: RelayForward, key: string | CryptoKey): Promise<string> {
  const signature = await hmac(key, signedText(forward));
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

function fieldsOf(header: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (fields.has(name)) throw invalid('a field is repeated');
    fields.set(name, part.slice(at + 1).trim());
  }
  return fields;
}

function invalid(why: string): RelayError {
  return new RelayError(
    'forward.header_invalid',
    `the ${RELAY_HEADER} header is malformed (${why}): it is added by @payhook/relay's client; a request without it did not come through the relay.`,
  );
}

function parseHeader(header: string | null | undefined): { forward: RelayForward; signature: string } {
  if (!header) throw invalid('absent');
  const fields = fieldsOf(header);
  if (fields.get('v') !== '1') throw invalid('not version 1');
  const sequence = Number(fields.get('seq'));
  const at = Number(fields.get('at'));
  const [channel, sender, digest, signature] = ['channel', 'sender', 'sha256', 'sig'].map((k) =>
    fields.get(k),
  );
  if (!Number.isSafeInteger(sequence) || sequence < 1) throw invalid('seq');
  if (!Number.isSafeInteger(at)) throw invalid('at');
  if (!channel || sender === undefined || !digest || !signature) throw invalid('a field is missing');
  let decodedSender: string;
  try {
    decodedSender = decodeURIComponent(sender);
  } catch {
    throw invalid('sender');
  }
  const forward = { channel, sequence, receivedAt: new Date(at), sender: decodedSender, sha256: digest };
  return { forward, signature };
}

/**
 * Checks the `X-Payhook-Relay` header of a forwarded delivery against the body received and the channel's key
 * (or several, during a rotation) and returns what the relay saw: the original sender, the sequence. Trust the
 * sender only from a forward that passed this check; the body's SHA-256 must match, so a signed header cannot be
 * moved onto another body.
 *
 * @throws {RelayError} `forward.header_invalid` (absent or malformed), `forward.signature_invalid` (no key
 *   signed it), `forward.body_mismatch` (the body is not the one the relay journaled).
 * @example
 * const body = new Uint8Array(await request.arrayBuffer());
 * const forward = await verifyRelayHeader(request.headers.get('x-payhook-relay'), body, process.env.RELAY_KEY!);
 * if (!SERVICE_SENDER_ADDRESSES.includes(forward.sender)) return new Response(null, { status: 403 });
 */
export async function verifyRelayHeader(
  header: string | null | undefined,
  body: Uint8Array | string,
  keys: string | readonly string[],
): Promise<RelayForward> {
  const { forward, signature } = parseHeader(header);
  const text = signedText(forward);
  let signed = false;
  for (const key of typeof keys === 'string' ? [keys] : keys) {
    if (sameText(await hmac(key, text), signature)) signed = true;
  }
  if (!signed) {
    throw new RelayError(
      'forward.signature_invalid',
      `the ${RELAY_HEADER} header is not signed with this channel's key: check the key printed when the channel was created.`,
    );
  }
  if (!sameText(await sha256(body), forward.sha256)) {
    throw new RelayError(
      'forward.body_mismatch',
      'the body is not the one the relay journaled (its SHA-256 differs): something between the client and this app changed it.',
    );
  }
  return forward;
}
