import { randomBytes } from 'node:crypto';
import { StoreError } from '../errors.js';
import { duration, optionError, positiveInteger } from '../option-checks.js';
import { sleep } from '../runtime/deadline.js';
import { DUPLICATE, IN_FLIGHT } from './claims.js';
import type { ClaimResult, DedupeStore } from './contract.js';
import {
  type RedisClientLike,
  type RunScript,
  type RunScriptAndWait,
  scriptRunner,
  waitingScriptRunner,
} from './redis-script.js';

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
  /**
   * Redis replicates asynchronously: a write its master acknowledged and lost before a replica had it (the master
   * failed, its replica was promoted) is gone. With this, the store sends `WAIT replicas timeoutMs` after each
   * claim, renewal and commit, on the connection that wrote it (a cluster's: the key's master), and counts on what
   * it wrote only once that many replicas acknowledged it. A claim short of them is released and refused (503
   * `store.unavailable`: nothing ran); a commit short of them is reported (the handlers ran; it is kept on the
   * master); a commit that fails (the master went away) is sent again until it lands, for up to the lease, so it
   * reaches the promoted replica, which holds the claim. WAIT holds the connection until it answers: keep
   * `timeoutMs` short, and run more replicas per master than you ask for, or a master whose replica is down
   * refuses every claim.
   * @default undefined (no WAIT: what the master acknowledged counts)
   */
  waitForReplicas?: { replicas: number; timeoutMs: number };
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
// Commit: done while the caller's token holds the key or nobody does (no key, or a lease that ran out); 2 for a key
// done already (which a commit sent again finds when its first landed), 0 for a key another claim holds.
const COMMIT_SCRIPT = `local v = redis.call('GET', KEYS[1])
if v == 'done' then return 2 end
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
 * every token unique. On Redis Cluster each script's one key finds its node; `waitForReplicas` counts on a claim or
 * a commit only once the key's master's replicas acknowledged it (Redis `WAIT`), so a failover cannot lose it.
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
  readonly #waiting:
    | { readonly run: RunScriptAndWait; readonly replicas: number; readonly timeoutMs: number }
    | undefined;
  /** The lease claims ask for (the handler's `leaseMs`): how long a failing commit is sent again (`waitForReplicas`). */
  #leaseMs = 15_000;

  constructor(options: RedisStoreOptions) {
    this.#run = scriptRunner(options.client, 'RedisStore');
    this.prefix = options.prefix ?? 'payhook:';
    this.#waiting = waitingOf(options);
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    this.#leaseMs = leaseMs;
    const random = randomBytes(16).toString('hex');
    const claimed = (answer: unknown) => Number.isInteger(Number(answer));
    const { answer, acked } = await this.#written(CLAIM_SCRIPT, key, random, leaseMs, claimed);
    if (answer === DONE) return DUPLICATE;
    const fence = Number(answer);
    if (!Number.isInteger(fence)) return IN_FLIGHT;
    const token = `${fence}:${random}`;
    if (acked !== undefined) {
      // Not awaited: on the connection it queues behind every WAIT sent before it, and the refusal needs nothing of it.
      this.release(key, token).catch(() => undefined);
      throw new StoreError(
        'store.unavailable',
        `the duplicate store (redis) claimed the notification on its key's master, but ${this.#shortOf(acked)}: a failover now could lose the claim and let another copy run the handlers at the same time, so it was released and nothing ran; the service's retry is safe. A master short of replicas (one down, or a failover not yet followed by the old master's return as a replica) refuses every claim so: run more replicas per master, or ask for fewer.`,
      );
    }
    return { status: 'claimed', token, fence };
  }

  async commit(key: string, token: string, ttlMs: number): Promise<boolean> {
    const waiting = this.#waiting;
    if (waiting === undefined) return Number(await this.#script(COMMIT_SCRIPT, key, token, ttlMs)) === 1;
    const [result, acked, again] = await this.#commitUntilAnswered(waiting.run, key, token, ttlMs);
    // 2: done already, which after a failed attempt is that attempt's own commit, landed before its answer was lost.
    const committed = Number(result) === 1 || (again && Number(result) === 2);
    if (committed && acked < waiting.replicas) {
      throw new StoreError(
        'store.unavailable',
        `the duplicate store (redis) recorded the handlers' success on the key's master, but ${this.#shortOf(acked)}: should that master fail before a replica has it, a redelivery runs the handlers again.`,
      );
    }
    return committed;
  }

  /**
   * The commit and its WAIT, sent again while they fail, for up to the lease: a master that went away is replaced by
   * its replica, which holds the claim (it waited for it). Resolves the script's answer, the replicas that
   * acknowledged it, and whether it was sent more than once.
   */
  async #commitUntilAnswered(
    run: RunScriptAndWait,
    key: string,
    token: string,
    ttlMs: number,
  ): Promise<[unknown, number, boolean]> {
    const until = Date.now() + this.#leaseMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const [result, acked] = await run(
          COMMIT_SCRIPT,
          [this.prefix + key],
          this.#args(token, ttlMs),
          this.#waiting!,
        );
        return [result, acked, attempt > 0];
      } catch (error) {
        if (Date.now() >= until) throw error;
        await sleep(Math.min(250, 25 * 2 ** attempt));
      }
    }
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    this.#leaseMs = leaseMs;
    const renewed = (answer: unknown) => Number(answer) === 1;
    const { answer, acked } = await this.#written(RENEW_SCRIPT, key, token, leaseMs, renewed);
    if (acked !== undefined) {
      throw new StoreError(
        'store.unavailable',
        `the duplicate store (redis) renewed the claim on its key's master, but ${this.#shortOf(acked)}.`,
      );
    }
    return renewed(answer);
  }

  async release(key: string, token: string): Promise<void> {
    await this.#script(RELEASE_SCRIPT, key, token, 0);
  }

  /** Deletes a done key (a committed notification's handler completions: nothing reads them again). */
  async forget(key: string): Promise<void> {
    await this.#script(FORGET_SCRIPT, key, '', 0);
  }

  /**
   * A script that writes the key and, with `waitForReplicas`, the replicas' acknowledgement: `acked` is set only when
   * the script wrote (`wrote` of its answer) and fewer replicas than asked for acknowledged it.
   */
  async #written(
    script: string,
    key: string,
    value: string,
    ms: number,
    wrote: (answer: unknown) => boolean,
  ): Promise<{ answer: unknown; acked?: number }> {
    const waiting = this.#waiting;
    if (waiting === undefined) return { answer: await this.#script(script, key, value, ms) };
    const [answer, acked] = await waiting.run(script, [this.prefix + key], this.#args(value, ms), waiting);
    return wrote(answer) && acked < waiting.replicas ? { answer, acked } : { answer };
  }

  #shortOf(acked: number): string {
    const { replicas, timeoutMs } = this.#waiting!;
    return `${acked} of the ${replicas} replicas waitForReplicas asks for acknowledged it within ${timeoutMs} ms`;
  }

  #args(value: string, ms: number): string[] {
    return [value, String(FENCE_MEMORY_MS), String(Math.max(1, Math.ceil(ms)))];
  }

  #script(script: string, key: string, value: string, ms: number): Promise<unknown> {
    return this.#run(script, [this.prefix + key], this.#args(value, ms));
  }
}

/** The `waitForReplicas` option, checked, with the client's way of sending WAIT; `undefined` without it. */
function waitingOf(options: RedisStoreOptions) {
  const wait = options.waitForReplicas;
  if (wait === undefined) return undefined;
  if (typeof wait !== 'object' || wait === null)
    throw optionError('waitForReplicas', '{ replicas, timeoutMs }', wait);
  if (wait.replicas === undefined)
    throw optionError('waitForReplicas.replicas', 'a positive integer', undefined);
  const replicas = positiveInteger('waitForReplicas.replicas', wait.replicas, 1);
  // Required, and never 0: WAIT's "for ever", on which a claim would hang when a master has no replica.
  if (wait.timeoutMs === undefined) {
    throw optionError(
      'waitForReplicas.timeoutMs',
      'a number of milliseconds from 1 to 2147483647',
      undefined,
    );
  }
  const timeoutMs = Math.ceil(duration('waitForReplicas.timeoutMs', wait.timeoutMs, 1));
  const run = waitingScriptRunner(options.client, 'RedisStore');
  if (run === undefined) {
    throw new TypeError(
      '[@payhook/core] RedisStore with waitForReplicas needs an ioredis client (Redis or Cluster) or a node-redis client or cluster: it sends WAIT on the connection that wrote the key.',
    );
  }
  return { run, replicas, timeoutMs };
}
