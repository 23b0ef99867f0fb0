import { randomBytes } from 'node:crypto';
import { DUPLICATE, IN_FLIGHT } from './claims.js';
import type { ClaimResult, DedupeStore } from './contract.js';
import { type RedisClientLike, type RunScript, scriptRunner } from './redis-script.js';

// The @payhook/core/redis entry: RedisStore here, and the script runner the payment watch's store is built on.
export { type RedisClientLike, type RunScript, scriptRunner } from './redis-script.js';

export interface RedisStoreOptions {
  /** A connected `ioredis` or node-redis client, shared with the rest of the app (no connection per request). */
  client: RedisClientLike;
  /**
   * Put in front of every key, so one Redis can serve several apps or environments.
   * @default 'payhook:'
   */
  prefix?: string;
}

/** The value of a key whose notification was handled; a lease holds `<fence>:<token>` instead. */
const DONE = 'done';
/**
 * How long a lease's key outlives the lease, keeping its fence: a claim that takes the key over after the lease
 * ran out (a run slower than its lease, or a crashed one) counts on from it. The lease itself has ended once the
 * key's remaining time is at most this.
 */
const FENCE_MEMORY_MS = 24 * 60 * 60 * 1000;

// Every script reads and writes the one key it names, so it runs on Redis Cluster too. A lease is live while the
// key's remaining time exceeds FENCE_MEMORY_MS (ARGV[2] below); a value without ':' is a lease written before
// fences (a plain token with the lease as its TTL): live while it exists.

// Claim: 'done', 'busy', or the new fence (one more than the last lease's, 1 for a new key).
const CLAIM_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v == 'done' then return 'done' end
local fence = 1
if v then
  local colon = string.find(v, ':', 1, true)
  local left = redis.call('PTTL', KEYS[1])
  if not colon or left < 0 or left > tonumber(ARGV[2]) then return 'busy' end
  fence = (tonumber(string.sub(v, 1, colon - 1)) or 0) + 1
end
redis.call('SET', KEYS[1], fence .. ':' .. ARGV[1], 'PX', ARGV[3] + ARGV[2])
return fence`;
// Commit: done while the caller's token holds the key or nobody does (no key, or a lease that ran out).
const COMMIT_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v == 'done' then return 0 end
if v and v ~= ARGV[1] then
  local left = redis.call('PTTL', KEYS[1])
  if not string.find(v, ':', 1, true) or left < 0 or left > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], 'done', 'PX', ARGV[3])
return 1`;
// Compare-and-extend: only the lease's holder may keep it alive (also after it ran out, while nobody took it).
const RENEW_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[3] + ARGV[2])
end
return 0`;
// Compare-and-end: the lease ends now, the key (and its fence) stays; a process whose lease was taken over
// changes nothing.
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

// Forget: deletes the key only once it is done (a lease, live or ended, keeps its fence).
const FORGET_SCRIPT = `if redis.call('GET', KEYS[1]) == 'done' then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * Duplicate detection shared by every instance through Redis, each operation one Lua script on the notification's
 * one key. `claim` takes a new key, or one whose lease ran out, for `<fence>:<random token>` (the fence one more
 * than the last lease's); `commit` writes `done` for the TTL only while the caller's token holds the key or
 * nobody does, and answers `false` otherwise (a stale run: fencing); `renew` and `release` act only for the
 * token's holder. After a restart of a Redis without persistence fences start again at 1; the random part keeps
 * every token unique.
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
  readonly #run: RunScript;

  constructor(options: RedisStoreOptions) {
    this.#run = scriptRunner(options.client, 'RedisStore');
    this.prefix = options.prefix ?? 'payhook:';
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const random = randomBytes(16).toString('hex');
    const answer = await this.#script(CLAIM_SCRIPT, key, random, leaseMs);
    if (answer === DONE) return DUPLICATE;
    const fence = Number(answer);
    if (!Number.isInteger(fence)) return IN_FLIGHT;
    return { status: 'claimed', token: `${fence}:${random}`, fence };
  }

  async commit(key: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await this.#script(COMMIT_SCRIPT, key, token, ttlMs)) === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return Number(await this.#script(RENEW_SCRIPT, key, token, leaseMs)) === 1;
  }

  async release(key: string, token: string): Promise<void> {
    await this.#script(RELEASE_SCRIPT, key, token, 0);
  }

  /** Deletes a done key (a committed notification's handler completions: nothing reads them again). */
  async forget(key: string): Promise<void> {
    await this.#script(FORGET_SCRIPT, key, '', 0);
  }

  #script(script: string, key: string, value: string, ms: number): Promise<unknown> {
    const args = [value, String(FENCE_MEMORY_MS), String(Math.max(1, Math.ceil(ms)))];
    return this.#run(script, [this.prefix + key], args);
  }
}
