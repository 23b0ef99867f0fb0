import { getHeader } from './body.js';
import type { HeaderBag } from './request.js';

/** The address the spec names as the service's webhook sender (part 6). */
export const SERVICE_SENDER_ADDRESSES: readonly string[] = ['35.187.74.148'];

export interface SenderOptions {
  /**
   * Addresses allowed to deliver webhooks; anything else answers 403. Off when not set. Pass
   * `SERVICE_SENDER_ADDRESSES` for the address the spec names.
   */
  allowedSenders?: readonly string[];
  /**
   * Read the sender from `X-Forwarded-For`: `true` takes its first (client) entry, a number `n` the entry added
   * by the `n`-th trusted proxy counted from this server. Only when every request passes through those proxies.
   * @default false
   */
  trustProxy?: boolean | number;
}

/** An address as the sender check compares it: trimmed, an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as IPv4. */
export function normalizeAddress(address: string): string {
  const trimmed = address.trim();
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}

/**
 * The sender's address: the first entry of `X-Forwarded-For` (or the one the `n`-th trusted proxy added) under
 * `trustProxy`, else the socket's address; an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) read as IPv4.
 *
 * @example
 * const sender = senderAddress(request.headers, socket.remoteAddress, 1);
 */
export function senderAddress(
  headers: HeaderBag,
  remoteAddress: string | undefined,
  trustProxy: boolean | number | undefined,
): string | undefined {
  if (trustProxy) {
    const forwarded = getHeader(headers, 'x-forwarded-for');
    if (forwarded) {
      const hops = forwarded.split(',');
      const index = trustProxy === true ? 0 : Math.max(0, hops.length - trustProxy);
      return normalizeAddress(hops[index]!);
    }
  }
  return remoteAddress === undefined ? undefined : normalizeAddress(remoteAddress);
}

/**
 * A check of a sender against the allowed addresses (compared as `senderAddress` normalises them); an unknown
 * sender is never allowed.
 *
 * @example
 * const allowed = createSenderCheck(SERVICE_SENDER_ADDRESSES);
 * if (!allowed(senderAddress(headers, remoteAddress, false))) return forbidden();
 */
export function createSenderCheck(allowed: readonly string[]): (address: string | undefined) => boolean {
  const set = new Set(allowed.map(normalizeAddress));
  return (address) => address !== undefined && set.has(address);
}
