import { createHash } from 'node:crypto';
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
 * Keys are kept as 16-byte digests and expiries as whole seconds, so an entry costs well under 110 bytes.
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

function compact(key: string): string {
  return createHash('sha256').update(key).digest().toString('latin1', 0, 16);
}
