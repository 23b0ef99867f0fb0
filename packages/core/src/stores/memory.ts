import type { ClaimResult, DedupeStore } from '../dedupe.js';

export interface MemoryStoreOptions {
  /**
   * The most keys remembered as done; the oldest is forgotten first. Memory stays flat under a flood.
   * @default 100_000
   */
  maxEntries?: number;
  /** The clock, in milliseconds (tests pass a fake one). @default Date.now */
  now?: () => number;
}

const DUPLICATE: ClaimResult = { status: 'duplicate' };
const IN_FLIGHT: ClaimResult = { status: 'in_flight' };

/**
 * Duplicate detection in this process's memory, bounded by entries and TTL. Right for one instance; several
 * instances need a shared store (`@payhook/core/redis`, `@payhook/core/postgres`).
 *
 * Keys are kept as 128-bit hashes and expiries as whole seconds: about 70 heap bytes per entry at the bound,
 * 100 to 140 once old keys give way to new ones (the Map's table grows once, then stays).
 *
 * @example
 * createWebhookHandler({ secret, store: new MemoryStore({ maxEntries: 1_000_000 }) });
 */
export class MemoryStore implements DedupeStore {
  readonly name = 'memory';
  readonly #now: () => number;
  readonly #epoch: number;
  /** digest → expiry (seconds since #epoch). An entry lives until its ring slot is reused, even once expired. */
  readonly #done = new Map<string, number>();
  /** Insertion order of #done as a ring: the slot about to be reused holds the oldest key. */
  readonly #ring: (string | undefined)[];
  #head = 0;
  /** digest → token and expiry (ms) of in-flight leases; few at a time. */
  readonly #leases = new Map<string, { token: string; expires: number }>();
  #sequence = 0;
  /** The last key compacted: the handler commits the key it just claimed, so one digest serves both calls. */
  #lastKey = '';
  #lastId = '';

  constructor(options?: MemoryStoreOptions) {
    this.#ring = new Array(Math.max(1, options?.maxEntries ?? 100_000));
    this.#now = options?.now ?? Date.now;
    this.#epoch = this.#now();
  }

  /** How many keys are remembered (expired ones included until their slot is reused). */
  get size(): number {
    return this.#done.size;
  }

  claim(key: string, leaseMs: number): ClaimResult {
    const id = this.#compact(key);
    const now = this.#now();
    const lease = this.#leases.get(id);
    if (lease !== undefined) {
      if (lease.expires > now) return IN_FLIGHT;
      this.#leases.delete(id);
    }
    const expiry = this.#done.get(id);
    if (expiry !== undefined && expiry > this.#seconds(now)) return DUPLICATE;
    const token = String(++this.#sequence);
    this.#leases.set(id, { token, expires: now + leaseMs });
    return { status: 'claimed', token };
  }

  commit(key: string, token: string, ttlMs: number): void {
    const id = this.#compact(key);
    if (this.#leases.get(id)?.token === token) this.#leases.delete(id);
    const expiry = this.#seconds(this.#now()) + Math.ceil(ttlMs / 1000);
    if (!this.#done.has(id)) {
      const oldest = this.#ring[this.#head];
      if (oldest !== undefined) this.#done.delete(oldest);
      this.#ring[this.#head] = id;
      this.#head = (this.#head + 1) % this.#ring.length;
    }
    this.#done.set(id, expiry);
  }

  release(key: string, token: string): void {
    const id = this.#compact(key);
    if (this.#leases.get(id)?.token === token) this.#leases.delete(id);
  }

  #compact(key: string): string {
    if (key !== this.#lastKey) {
      this.#lastId = compact(key);
      this.#lastKey = key;
    }
    return this.#lastId;
  }

  #seconds(now: number): number {
    return Math.floor((now - this.#epoch) / 1000);
  }
}

/**
 * The key's 128-bit MurmurHash3 (x86_128, over its UTF-16 code units) as an 8-character string: 32 heap bytes
 * whatever the key's length. A non-cryptographic hash is enough here, keys come from signed notifications, and it
 * costs a tenth of a `createHash` call. Chance of any collision among a million keys: about 1e-27.
 */
function compact(key: string): string {
  const length = key.length;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  const blocks = length - (length % 8);
  for (let i = 0; i < blocks; i += 8) {
    let k1 = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    let k2 = key.charCodeAt(i + 2) | (key.charCodeAt(i + 3) << 16);
    let k3 = key.charCodeAt(i + 4) | (key.charCodeAt(i + 5) << 16);
    let k4 = key.charCodeAt(i + 6) | (key.charCodeAt(i + 7) << 16);
    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 ^= k1;
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 ^= k2;
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 ^= k3;
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 ^= k4;
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  const tail = length - blocks;
  if (tail > 6) h4 ^= Math.imul(rotl(Math.imul(unitAt(key, blocks + 6), C4), 18), C1);
  if (tail > 4) h3 ^= Math.imul(rotl(Math.imul(pairAt(key, blocks + 4), C3), 17), C4);
  if (tail > 2) h2 ^= Math.imul(rotl(Math.imul(pairAt(key, blocks + 2), C2), 16), C3);
  if (tail > 0) h1 ^= Math.imul(rotl(Math.imul(pairAt(key, blocks), C1), 15), C2);
  const bytes = length * 2;
  h1 ^= bytes;
  h2 ^= bytes;
  h3 ^= bytes;
  h4 ^= bytes;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  return String.fromCharCode(
    h1 & 0xffff,
    h1 >>> 16,
    h2 & 0xffff,
    h2 >>> 16,
    h3 & 0xffff,
    h3 >>> 16,
    h4 & 0xffff,
    h4 >>> 16,
  );
}

const C1 = 0x239b961b;
const C2 = 0xab0e9789 | 0;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93 | 0;

/** The code unit at `i`, or 0 past the end (the hash reads its last block as if zero-padded). */
function unitAt(key: string, i: number): number {
  return i < key.length ? key.charCodeAt(i) : 0;
}

function pairAt(key: string, i: number): number {
  return unitAt(key, i) | (unitAt(key, i + 1) << 16);
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}
