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
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #epoch: number;
  /** digest → expiry (seconds since #epoch), in insertion order, which is expiry order for a fixed TTL. */
  readonly #done = new Map<string, number>();
  /** digest → token and expiry (ms) of in-flight leases; few at a time. */
  readonly #leases = new Map<string, { token: string; expires: number }>();
  #sequence = 0;

  constructor(options?: MemoryStoreOptions) {
    this.#maxEntries = Math.max(1, options?.maxEntries ?? 100_000);
    this.#now = options?.now ?? Date.now;
    this.#epoch = this.#now();
  }

  /** How many keys are remembered as done. */
  get size(): number {
    return this.#done.size;
  }

  claim(key: string, leaseMs: number): ClaimResult {
    const id = compact(key);
    const now = this.#now();
    const lease = this.#leases.get(id);
    if (lease !== undefined) {
      if (lease.expires > now) return IN_FLIGHT;
      this.#leases.delete(id);
    }
    const expiry = this.#done.get(id);
    if (expiry !== undefined) {
      if (expiry > this.#seconds(now)) return DUPLICATE;
      this.#done.delete(id);
    }
    this.#pruneOldest(now);
    const token = String(++this.#sequence);
    this.#leases.set(id, { token, expires: now + leaseMs });
    return { status: 'claimed', token };
  }

  commit(key: string, token: string, ttlMs: number): void {
    const id = compact(key);
    if (this.#leases.get(id)?.token === token) this.#leases.delete(id);
    this.#done.delete(id);
    if (this.#done.size >= this.#maxEntries) this.#evictFirst();
    this.#done.set(id, this.#seconds(this.#now()) + Math.ceil(ttlMs / 1000));
  }

  release(key: string, token: string): void {
    const id = compact(key);
    if (this.#leases.get(id)?.token === token) this.#leases.delete(id);
  }

  #seconds(now: number): number {
    return Math.floor((now - this.#epoch) / 1000);
  }

  #evictFirst(): void {
    for (const first of this.#done.keys()) {
      this.#done.delete(first);
      return;
    }
  }

  /** Drops a few expired entries from the front on every claim: amortised cleanup, no timer. */
  #pruneOldest(now: number): void {
    const seconds = this.#seconds(now);
    let budget = 4;
    for (const [id, expiry] of this.#done) {
      if (expiry > seconds || budget-- === 0) return;
      this.#done.delete(id);
    }
  }
}

function compact(key: string): string {
  return createHash('sha256').update(key).digest().toString('latin1', 0, 16);
}
