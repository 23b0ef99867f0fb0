import { randomBytes } from 'node:crypto';
import type { ClaimResult, DedupeStore } from '../dedupe.js';

/**
 * The part of a Redis client the store uses. Both an `ioredis` client (`new Redis(url)`, or a `Cluster`) and a
 * node-redis v4/v5 client (`createClient({ url })`, connected) fit it: they differ in how options are passed,
 * which the store detects (ioredis has `call`).
 *
 * @example
 * const client: RedisClientLike = new Redis(process.env.REDIS_URL!);
 */
export interface RedisClientLike {
  set(...args: never[]): Promise<unknown>;
  get(...args: never[]): Promise<unknown>;
  eval(...args: never[]): Promise<unknown>;
}

export interface RedisStoreOptions {
  /** A connected `ioredis` or node-redis client, shared with the rest of the app (no connection per request). */
  client: RedisClientLike;
  /**
   * Put in front of every key, so one Redis can serve several apps or environments.
   * @default 'payhook:'
   */
  prefix?: string;
}

/** The value of a key whose notification was handled; a lease holds its token (32 hex digits) instead. */
const DONE = 'done';
const DUPLICATE: ClaimResult = { status: 'duplicate' };
const IN_FLIGHT: ClaimResult = { status: 'in_flight' };
// Compare-and-delete: a process whose lease expired and was taken over must not delete the new holder's lease.
const RELEASE_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
// Compare-and-extend, for the same reason: only the lease's holder may keep it alive.
const RENEW_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";

type Call = (...args: unknown[]) => Promise<unknown>;

/**
 * Duplicate detection shared by every instance through Redis. `claim` is one `SET key token PX lease NX`
 * (plus a `GET` only when the key exists, to tell a duplicate from a copy in progress); `commit` overwrites the
 * key with a done marker for the TTL, unconditionally, because the work has succeeded even if the lease ran out;
 * `release` deletes the key only while it still holds the caller's token (a Lua compare-and-delete).
 *
 * @example
 * import { Redis } from 'ioredis';
 * import { RedisStore } from '@payhook/core/redis';
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL!) });
 * createWebhookHandler({ secret, store });
 */
export class RedisStore implements DedupeStore {
  readonly name = 'redis';
  readonly prefix: string;
  readonly #ioredis: boolean;
  readonly #set: Call;
  readonly #get: Call;
  readonly #eval: Call;

  constructor(options: RedisStoreOptions) {
    const client = options.client;
    if (
      typeof client?.set !== 'function' ||
      typeof client.get !== 'function' ||
      typeof client.eval !== 'function'
    ) {
      throw new TypeError(
        '[@payhook/core] RedisStore needs a Redis client with set, get and eval: pass an ioredis or node-redis client.',
      );
    }
    this.prefix = options.prefix ?? 'payhook:';
    this.#ioredis = typeof (client as { call?: unknown }).call === 'function';
    this.#set = (client.set as Call).bind(client);
    this.#get = (client.get as Call).bind(client);
    this.#eval = (client.eval as Call).bind(client);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const id = this.prefix + key;
    const token = randomBytes(16).toString('hex');
    const ms = Math.max(1, Math.ceil(leaseMs));
    // A key that expires between the SET and the GET is claimable again: try once more, then call it in flight.
    for (let attempt = 0; attempt < 2; attempt++) {
      const set = this.#ioredis
        ? this.#set(id, token, 'PX', ms, 'NX')
        : this.#set(id, token, { PX: ms, NX: true });
      if ((await set) === 'OK') return { status: 'claimed', token };
      const value = await this.#get(id);
      if (value === DONE) return DUPLICATE;
      if (value !== null && value !== undefined) return IN_FLIGHT;
    }
    return IN_FLIGHT;
  }

  async commit(key: string, _token: string, ttlMs: number): Promise<void> {
    const id = this.prefix + key;
    const ms = Math.max(1, Math.ceil(ttlMs));
    await (this.#ioredis ? this.#set(id, DONE, 'PX', ms) : this.#set(id, DONE, { PX: ms }));
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const id = this.prefix + key;
    const ms = String(Math.max(1, Math.ceil(leaseMs)));
    const renewed = await (this.#ioredis
      ? this.#eval(RENEW_SCRIPT, 1, id, token, ms)
      : this.#eval(RENEW_SCRIPT, { keys: [id], arguments: [token, ms] }));
    return Number(renewed) === 1;
  }

  async release(key: string, token: string): Promise<void> {
    const id = this.prefix + key;
    await (this.#ioredis
      ? this.#eval(RELEASE_SCRIPT, 1, id, token)
      : this.#eval(RELEASE_SCRIPT, { keys: [id], arguments: [token] }));
  }
}
