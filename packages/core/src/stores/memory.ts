import { DUPLICATE, IN_FLIGHT } from './claims.js';
import type { ClaimResult, DedupeStore } from './contract.js';
import { hashed, hashKey } from './key-hash.js';

export interface MemoryStoreOptions {
  /**
   * The most notifications remembered as done; the oldest is forgotten first. Memory stays flat under a flood.
   * Handlers' completions of a notification not yet committed are held beside them (up to 1,024 keys more).
   * @default 100_000
   */
  maxEntries?: number;
  /** The clock, in milliseconds (tests pass a fake one). @default Date.now */
  now?: () => number;
}

/** An in-flight claim: its key's hash, its token, when it expires (ms), and the next lease in its bucket. */
interface Lease {
  readonly h1: number;
  readonly h2: number;
  readonly h3: number;
  readonly h4: number;
  readonly token: string;
  expires: number;
  next: Lease | undefined;
}

/** Int32 words per table slot: the key's 128-bit hash, then its expiry (seconds since the epoch, plus 1; 0 = empty). */
const SLOT = 5;
const MIN_SLOTS = 1024;
const MAX_EXPIRY = 2 ** 31 - 2;
/** Keys held past the bound while leases are live: handler completions, forgotten once their notification commits. */
const SLACK = 1_024;

/**
 * Duplicate detection in this process's memory, bounded by entries and TTL. Right for one instance; several
 * instances need a shared store (`@payhook/core/redis`, `@payhook/core/postgres`). The bound counts notifications
 * whatever the number of handlers: a notification's handler completions are forgotten once it is committed.
 *
 * Keys are kept as 128-bit hashes in an open-addressing table of typed arrays, with expiries as whole seconds:
 * no object per entry for the garbage collector to trace, 42 to 84 bytes per entry depending on how full the
 * table's power of two is (up to 16 more while forgotten completions wait in the ring), and never more once the
 * bound is reached.
 *
 * @example
 * createWebhookHandler({ secret, store: new MemoryStore({ maxEntries: 1_000_000 }) });
 */
export class MemoryStore implements DedupeStore {
  readonly name = 'memory';
  readonly #now: () => number;
  readonly #epoch: number;
  readonly #maxEntries: number;
  /** Linear probing, `SLOT` words per slot; at most half full. An entry stays until the ring reuses its place. */
  #table: Int32Array;
  #mask: number;
  /**
   * The hashes of the remembered keys in insertion order, 4 words each, from `#tail` (the oldest) for `#used`
   * places; a place whose key was forgotten stays until the ring passes it or is rebuilt.
   */
  #ring: Int32Array;
  #tail = 0;
  #used = 0;
  #count = 0;
  /** Keys done while other leases were live, since the bound was last enforced: most are completions to forget. */
  #young = 0;
  /** In-flight leases, few at a time, by the low bits of the key's first hash word (a small integer, cheap to hash). */
  readonly #leases = new Map<number, Lease>();
  #sequence = 0;
  /** The hash of the last key seen: the handler commits the key it just claimed, so one hash serves both calls. */
  #lastKey: string | undefined;
  #h1 = 0;
  #h2 = 0;
  #h3 = 0;
  #h4 = 0;

  constructor(options?: MemoryStoreOptions) {
    this.#maxEntries = Math.max(1, Math.floor(options?.maxEntries ?? 100_000));
    this.#now = options?.now ?? Date.now;
    this.#epoch = this.#now();
    const slots = Math.min(MIN_SLOTS, slotsFor(this.#maxEntries + SLACK));
    this.#table = new Int32Array(slots * SLOT);
    this.#mask = slots - 1;
    this.#ring = new Int32Array(Math.min(this.#maxEntries, slots >> 1) * 4);
  }

  /** How many keys are remembered (expired ones included until their place is reused). */
  get size(): number {
    return this.#count;
  }

  claim(key: string, leaseMs: number): ClaimResult {
    this.#hash(key);
    const now = this.#now();
    const lease = this.#leases.size === 0 ? undefined : this.#lease();
    if (lease !== undefined) {
      if (lease.expires > now) return IN_FLIGHT;
      this.#dropLease(lease);
    }
    const slot = this.#slotOf(this.#h1, this.#h2, this.#h3, this.#h4);
    if (slot >= 0 && this.#table[slot * SLOT + 4]! - 1 > this.#seconds(now)) return DUPLICATE;
    // One sequence for every key: each claim of a key holds a larger fence than the one before.
    const fence = ++this.#sequence;
    const token = String(fence);
    const bucket = this.#h1 & 0x3fffffff;
    this.#leases.set(bucket, {
      h1: this.#h1,
      h2: this.#h2,
      h3: this.#h3,
      h4: this.#h4,
      token,
      expires: now + leaseMs,
      next: this.#leases.get(bucket),
    });
    return { status: 'claimed', token, fence };
  }

  /** Marks the key done unless another claim took it or it is done already (a stale run: answers false). */
  commit(key: string, token: string, ttlMs: number): boolean {
    this.#hash(key);
    const lease = this.#leases.size === 0 ? undefined : this.#lease();
    if (lease !== undefined && lease.token !== token) return false;
    if (lease !== undefined) this.#dropLease(lease);
    const seconds = this.#seconds(this.#now());
    let slot = this.#slotOf(this.#h1, this.#h2, this.#h3, this.#h4);
    if (slot >= 0 && this.#table[slot * SLOT + 4]! - 1 > seconds) return false;
    if (slot < 0) slot = this.#insert();
    this.#table[slot * SLOT + 4] = Math.min(MAX_EXPIRY, seconds + Math.ceil(ttlMs / 1000)) + 1;
    return true;
  }

  /** Drops a done key (a committed notification's handler completions), so it no longer counts against the bound. */
  forget(key: string): void {
    this.#hash(key);
    this.#remove(this.#h1, this.#h2, this.#h3, this.#h4);
  }

  renew(key: string, token: string, leaseMs: number): boolean {
    this.#hash(key);
    const lease = this.#leases.size === 0 ? undefined : this.#lease();
    if (lease?.token !== token) return false;
    lease.expires = this.#now() + leaseMs;
    return true;
  }

  release(key: string, token: string): void {
    this.#hash(key);
    this.#release(token);
  }

  #release(token: string): void {
    const lease = this.#leases.size === 0 ? undefined : this.#lease();
    if (lease?.token === token) this.#dropLease(lease);
  }

  #lease(): Lease | undefined {
    let lease = this.#leases.get(this.#h1 & 0x3fffffff);
    while (
      lease !== undefined &&
      (lease.h1 !== this.#h1 || lease.h2 !== this.#h2 || lease.h3 !== this.#h3 || lease.h4 !== this.#h4)
    ) {
      lease = lease.next;
    }
    return lease;
  }

  #dropLease(lease: Lease): void {
    const bucket = lease.h1 & 0x3fffffff;
    const head = this.#leases.get(bucket)!;
    if (head === lease) {
      if (lease.next === undefined) this.#leases.delete(bucket);
      else this.#leases.set(bucket, lease.next);
      return;
    }
    let previous = head;
    while (previous.next !== lease) previous = previous.next!;
    previous.next = lease.next;
  }

  #hash(key: string): void {
    if (key === this.#lastKey) return;
    hashKey(key);
    this.#h1 = hashed[0]!;
    this.#h2 = hashed[1]!;
    this.#h3 = hashed[2]!;
    this.#h4 = hashed[3]!;
    this.#lastKey = key;
  }

  #slotOf(h1: number, h2: number, h3: number, h4: number): number {
    const table = this.#table;
    const mask = this.#mask;
    for (let slot = h1 & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT;
      if (table[at + 4] === 0) return -1;
      if (table[at] === h1 && table[at + 1] === h2 && table[at + 2] === h3 && table[at + 3] === h4)
        return slot;
    }
  }

  /**
   * Adds the current hash (not present) as the newest entry; returns its slot. With no lease live the bound is
   * enforced, not counting the keys done while leases were (a notification's completions, forgotten right after
   * its commit); with leases live, only past the slack.
   */
  #insert(): number {
    if (this.#leases.size > 0) {
      this.#young++;
      if (this.#count >= this.#maxEntries + SLACK) this.#forgetOldest();
    } else {
      while (this.#count - this.#young >= this.#maxEntries && this.#forgetOldest()) {}
      this.#young = 0;
    }
    if (this.#count * 2 >= this.#mask + 1) this.#growTable();
    if (this.#used * 4 === this.#ring.length) this.#rebuildRing();
    // Only a key forgotten, then done again, can leave two places: then the oldest one goes.
    if (this.#used * 4 === this.#ring.length) this.#forgetOldest();
    const capacity = this.#ring.length / 4;
    const place = this.#tail + this.#used;
    const at = (place < capacity ? place : place - capacity) * 4;
    this.#ring[at] = this.#h1;
    this.#ring[at + 1] = this.#h2;
    this.#ring[at + 2] = this.#h3;
    this.#ring[at + 3] = this.#h4;
    this.#used++;
    this.#count++;
    return this.#place(this.#h1, this.#h2, this.#h3, this.#h4);
  }

  /** Removes the oldest key still in the table, passing the places of keys forgotten already. */
  #forgetOldest(): boolean {
    const ring = this.#ring;
    const capacity = ring.length / 4;
    while (this.#used > 0) {
      const at = this.#tail * 4;
      this.#tail = this.#tail + 1 === capacity ? 0 : this.#tail + 1;
      this.#used--;
      if (this.#remove(ring[at]!, ring[at + 1]!, ring[at + 2]!, ring[at + 3]!)) return true;
    }
    return false;
  }

  /**
   * The ring is full: copies the places of the keys still in the table, oldest first, into a ring twice as large up
   * to the bound (up to twice the bound while forgotten keys fill places), or as large when it cannot grow: then
   * at least half its places were forgotten ones, so rebuilding costs one copy per place freed.
   */
  #rebuildRing(): void {
    const old = this.#ring;
    const capacity = old.length / 4;
    const bound = this.#maxEntries + SLACK;
    const limit = this.#count === this.#used ? bound : bound * 2;
    const ring = new Int32Array(Math.max(capacity, Math.min(capacity * 2, limit)) * 4);
    let used = 0;
    for (let i = 0; i < this.#used; i++) {
      const place = this.#tail + i;
      const at = (place < capacity ? place : place - capacity) * 4;
      const forgotten =
        this.#count < this.#used && this.#slotOf(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!) < 0;
      if (forgotten) continue;
      ring.set(old.subarray(at, at + 4), used * 4);
      used++;
    }
    this.#ring = ring;
    this.#tail = 0;
    this.#used = used;
  }

  /** Writes a hash into the first free slot of its probe sequence; the caller sets its expiry. */
  #place(h1: number, h2: number, h3: number, h4: number): number {
    const table = this.#table;
    const mask = this.#mask;
    let slot = h1 & mask;
    while (table[slot * SLOT + 4] !== 0) slot = (slot + 1) & mask;
    const at = slot * SLOT;
    table[at] = h1;
    table[at + 1] = h2;
    table[at + 2] = h3;
    table[at + 3] = h4;
    table[at + 4] = 1;
    return slot;
  }

  /**
   * Deletes a hash, shifting later entries of its cluster back so every probe sequence stays unbroken. False when
   * it was not there.
   */
  #remove(h1: number, h2: number, h3: number, h4: number): boolean {
    const table = this.#table;
    const mask = this.#mask;
    let hole = this.#slotOf(h1, h2, h3, h4);
    if (hole < 0) return false;
    this.#count--;
    for (let next = (hole + 1) & mask; table[next * SLOT + 4] !== 0; next = (next + 1) & mask) {
      const home = table[next * SLOT]! & mask;
      // An entry may move back into the hole unless its home lies cyclically after the hole, up to where it is.
      const stays = hole <= next ? home > hole && home <= next : home > hole || home <= next;
      if (stays) continue;
      table.copyWithin(hole * SLOT, next * SLOT, next * SLOT + SLOT);
      hole = next;
    }
    table.fill(0, hole * SLOT, hole * SLOT + SLOT);
    return true;
  }

  #growTable(): void {
    const old = this.#table;
    const slots = Math.min(slotsFor(this.#maxEntries + SLACK), (this.#mask + 1) * 2);
    if (slots === this.#mask + 1) return;
    this.#table = new Int32Array(slots * SLOT);
    this.#mask = slots - 1;
    for (let at = 0; at < old.length; at += SLOT) {
      if (old[at + 4] === 0) continue;
      const slot = this.#place(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!);
      this.#table[slot * SLOT + 4] = old[at + 4]!;
    }
  }

  #seconds(now: number): number {
    return Math.floor((now - this.#epoch) / 1000);
  }
}

/** Slots for a bound: the power of two that keeps the table at most half full. */
function slotsFor(maxEntries: number): number {
  let slots = MIN_SLOTS;
  while (slots < maxEntries * 2) slots *= 2;
  return slots;
}
