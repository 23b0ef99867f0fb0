import { encodeBase64Url } from '@payhook/core/adapter';

// Web Crypto only: the relay's main entry runs wherever `crypto.subtle` does (Node.js 20, Bun, Deno, Workers).

const encoder = new TextEncoder();

function bytesOf(input: Uint8Array | string): Uint8Array<ArrayBuffer> {
  if (typeof input === 'string') return encoder.encode(input);
  return input.buffer instanceof ArrayBuffer ? (input as Uint8Array<ArrayBuffer>) : new Uint8Array(input);
}

/** The SHA-256 of `input` (UTF-8 for text), base64url without padding. */
export async function sha256(input: Uint8Array | string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytesOf(input));
  return encodeBase64Url(new Uint8Array(digest), { pad: false });
}

/** A key imported once for HMAC-SHA256 (importing it costs more than a short message's MAC). */
export function hmacKey(key: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', bytesOf(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

/** HMAC-SHA256 of `message` under `key`, base64url without padding. */
export async function hmac(key: string | CryptoKey, message: string): Promise<string> {
  const imported = typeof key === 'string' ? await hmacKey(key) : key;
  const mac = await crypto.subtle.sign('HMAC', imported, bytesOf(message));
  return encodeBase64Url(new Uint8Array(mac), { pad: false });
}

/** `bytes` random bytes, base64url without padding. */
export function randomText(bytes: number): string {
  return encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)), { pad: false });
}

/** Compares two strings without an early exit (both are digests of known length where it matters). */
export function sameText(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    difference |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  }
  return difference === 0;
}
