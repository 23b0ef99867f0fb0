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

function normalize(address: string): string {
  const trimmed = address.trim();
  return trimmed.startsWith('::ffff:') && trimmed.includes('.') ? trimmed.slice(7) : trimmed;
}

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
      return normalize(hops[index]!);
    }
  }
  return remoteAddress === undefined ? undefined : normalize(remoteAddress);
}

export function createSenderCheck(allowed: readonly string[]): (address: string | undefined) => boolean {
  const set = new Set(allowed.map(normalize));
  return (address) => address !== undefined && set.has(address);
}
