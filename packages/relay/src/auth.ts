import { randomText, sameText, sha256 } from './crypto.js';
import { RelayError } from './errors.js';
import type { ChannelRecord, Journal } from './journal/contract.js';

// Who may do what: the admin token creates channels; a channel's token reads that channel only. Tokens are
// compared as SHA-256 digests; the journal holds only the digests.

const TOKEN_PREFIX = 'phr_';

/** A new channel token: 32 random bytes, recognisable by its prefix in a leaked-secret scan. */
export function newChannelToken(): string {
  return `${TOKEN_PREFIX}${randomText(32)}`;
}

/** The digest the journal keeps for a token. */
export function tokenHash(token: string): Promise<string> {
  return sha256(token);
}

/** The bearer token of a request, or undefined when it carries none. */
function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/** Refuses a request without the admin token (401), or any when the relay has none (403). */
export async function requireAdmin(request: Request, adminHash: string | undefined): Promise<void> {
  if (adminHash === undefined) {
    throw new RelayError(
      'admin.disabled',
      'channel creation is off: start the relay with an admin token (adminToken, PAYHOOK_RELAY_ADMIN_TOKEN).',
    );
  }
  const token = bearerToken(request);
  if (token === undefined || !sameText(await tokenHash(token), adminHash)) {
    throw new RelayError(
      'admin.token_invalid',
      'creating a channel needs the admin token as "Authorization: Bearer <token>".',
    );
  }
}

/**
 * The channel a request may read: its token must be that channel's. A missing or unknown token is 401; the token
 * of another channel is 403 (whether the channel asked for exists is not told).
 */
export async function requireChannelToken(
  request: Request,
  journal: Journal,
  name: string,
): Promise<ChannelRecord> {
  const token = bearerToken(request);
  if (token === undefined) {
    throw new RelayError(
      'token.missing',
      'reading a channel needs its token as "Authorization: Bearer <token>".',
    );
  }
  const owner = await journal.findChannelByToken(await tokenHash(token));
  if (owner === undefined) {
    throw new RelayError(
      'token.invalid',
      'this token belongs to no channel: use the one printed when it was created.',
    );
  }
  if (owner.name !== name) {
    throw new RelayError(
      'token.forbidden',
      "this token is another channel's: each channel is read with its own.",
    );
  }
  return owner;
}
