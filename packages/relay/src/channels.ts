import { json } from './answers.js';
import { newChannelToken, tokenHash } from './auth.js';
import { RelayError } from './errors.js';
import { CHANNEL_NAME } from './journal/contract.js';
import type { ResolvedOptions } from './options.js';
import type { EventSigner } from './wire.js';

// `POST /channels` (admin): a new channel, its token shown once, and the key its forwards are signed with.

/**
 * What creating a channel answers, once: keep the token and the key, the relay stores neither.
 *
 * @example
 * const created: CreatedChannel = await response.json();
 * console.log(created.serverUrl); // the server_url payments name
 */
export interface CreatedChannel {
  readonly channel: string;
  /** Reads the channel (`Authorization: Bearer <token>`). Stored by the relay only as its SHA-256. */
  readonly token: string;
  /** Verifies the `X-Payhook-Relay` header of this channel's forwards (`verifyRelayHeader`). */
  readonly key: string;
  /** The `server_url` (or `notification_url`) payments name: the relay's `/in/<channel>`. */
  readonly serverUrl: string;
  /** What `payhook relay connect` reads: the relay's `/out/<channel>`. */
  readonly connectUrl: string;
}

async function nameFrom(request: Request): Promise<string> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    throw new RelayError('request.malformed', 'the body must be JSON: {"name":"alice"}.');
  }
  const name = (body as { name?: unknown } | null)?.name;
  if (typeof name !== 'string' || !CHANNEL_NAME.test(name)) {
    throw new RelayError(
      'channel.name_invalid',
      'a channel name is 1 to 63 lowercase letters, digits, "-" or "_", starting with a letter or digit.',
    );
  }
  return name;
}

/** Creates a channel; 409 when the name is taken (its token is never shown again). */
export async function createChannel(
  options: ResolvedOptions,
  signer: EventSigner,
  request: Request,
  origin: string,
): Promise<Response> {
  if (request.method !== 'POST') {
    throw new RelayError('request.method_not_allowed', 'channels are created with POST.', { allow: 'POST' });
  }
  const name = await nameFrom(request);
  const token = newChannelToken();
  const created = await options.journal.createChannel({
    name,
    tokenHash: await tokenHash(token),
    createdAt: Date.now(),
  });
  if (!created) {
    throw new RelayError(
      'channel.exists',
      `a channel named ${name} exists: its token was shown when it was created.`,
    );
  }
  options.logger.info(`[@payhook/relay] channel ${name} created`);
  const base = `${options.publicUrl ?? origin}${options.basePath}`;
  const answer: CreatedChannel = {
    channel: name,
    token,
    key: await signer.key(name),
    serverUrl: `${base}/in/${name}`,
    connectUrl: `${base}/out/${name}`,
  };
  return json(201, answer);
}
