import { PayloadError, RequestError, SignatureError, verifyNotification } from '@payhook/core';
import { createSenderCheck, senderAddress, withDeadline } from '@payhook/core/adapter';
import { json } from './answers.js';
import { sha256 } from './crypto.js';
import { RelayError } from './errors.js';
import type { Journal } from './journal/contract.js';
import type { ResolvedOptions } from './options.js';
import type { Wakeups } from './wakeups.js';

// `POST /in/<channel>`: the service's delivery, journaled byte for byte before it is answered 200.

/** What the runtime knows about a request beyond the `Request`: the peer's address. */
export interface RequestInfo {
  /** The TCP peer's address (`socket.remoteAddress`, Deno's `info.remoteAddr.hostname`, Bun's `requestIP`). */
  remoteAddress?: string | undefined;
}

export interface IngressContext {
  readonly options: ResolvedOptions;
  readonly wakeups: Wakeups;
  readonly senderAllowed: ((address: string | undefined) => boolean) | undefined;
}

export function ingressContext(options: ResolvedOptions, wakeups: Wakeups): IngressContext {
  const senderAllowed = options.allowedSenders ? createSenderCheck(options.allowedSenders) : undefined;
  return { options, wakeups, senderAllowed };
}

/** Journals one delivery and answers 200 with its sequence, or refuses it with nothing journaled. */
export async function receive(
  context: IngressContext,
  request: Request,
  name: string,
  info: RequestInfo | undefined,
): Promise<Response> {
  const { options, wakeups } = context;
  if (request.method !== 'POST') {
    throw new RelayError('request.method_not_allowed', 'the service delivers with POST.', { allow: 'POST' });
  }
  const sender = senderAddress(request.headers, info?.remoteAddress, options.trustProxy) ?? '';
  checkSender(context, sender);
  await requireChannel(options.journal, name);
  const body = await readBody(request, options.maxBodyBytes);
  const mediaType = request.headers.get('content-type') ?? '';
  if (options.verifySignature) checkSignature(body, options.verifySignature);
  const entry = { receivedAt: Date.now(), mediaType, sender, sha256: await sha256(body), body };
  const sequence = await withinDeadline(options.journal.append(name, entry), options.writeTimeoutMs);
  wakeups.wake(name);
  return json(200, { ok: true, sequence });
}

function checkSender(context: IngressContext, sender: string): void {
  if (context.senderAllowed && !context.senderAllowed(sender || undefined)) {
    throw new RelayError(
      'sender.forbidden',
      'this sender is not in allowedSenders: nothing was journaled (behind a proxy, set trustProxy).',
    );
  }
}

async function requireChannel(journal: Journal, name: string): Promise<void> {
  if ((await journal.findChannel(name)) === undefined) {
    throw new RelayError(
      'channel.not_found',
      'no channel of this name: create it first (payhook relay channel create NAME), then use the server_url it prints.',
    );
  }
}

function tooLarge(max: number): RelayError {
  return new RelayError(
    'payload.too_large',
    `the body is over ${max} bytes (maxBodyBytes): nothing was journaled.`,
  );
}

/** The body's bytes as they arrived, read under `max`. */
async function readBody(request: Request, max: number): Promise<Uint8Array> {
  const length = Number(request.headers.get('content-length') ?? Number.NaN);
  if (length > max) throw tooLarge(max);
  if (!request.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        throw tooLarge(max);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RelayError) throw error;
    throw new RelayError(
      'payload.unreadable',
      'the body could not be read to its end: nothing was journaled.',
      {
        cause: error,
      },
    );
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** The edge check: refuses what the service did not sign; a signed delivery core would refuse later passes. */
function checkSignature(body: Uint8Array, verify: NonNullable<ResolvedOptions['verifySignature']>): void {
  try {
    verifyNotification(body, verify.secret, { algorithm: verify.algorithm });
  } catch (error) {
    if (error instanceof SignatureError) {
      throw new RelayError(
        'signature.invalid',
        'the webhook signature does not match: nothing was journaled.',
      );
    }
    if (error instanceof RequestError) {
      throw new RelayError('signature.invalid', 'the body is not a signed delivery: nothing was journaled.');
    }
    // Signed, but its data is not a notification core reads: journaled, the app answers it.
    if (!(error instanceof PayloadError)) throw error;
  }
}

/** The write, or 503: `journal.timeout` past `writeTimeoutMs`, `journal.unavailable` when it failed. */
async function withinDeadline(append: Promise<number>, ms: number): Promise<number> {
  // A write that lands after the deadline must not become an unhandled rejection.
  append.catch(() => {});
  const late = () =>
    new RelayError(
      'journal.timeout',
      `the journal did not confirm the write within ${ms} ms (writeTimeoutMs): answered 503 so the service delivers again.`,
    );
  try {
    return await withDeadline(append, ms, late);
  } catch (error) {
    if (error instanceof RelayError) throw error;
    throw new RelayError(
      'journal.unavailable',
      'the journal refused the write: answered 503 so the service delivers again.',
      {
        cause: error,
      },
    );
  }
}
