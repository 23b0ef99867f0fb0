import { type RedisClientLike, type RunScript, scriptRunner } from '@payhook/core/redis';
import { entryId, removeId, type WatchedPayment, type WatchStore, watchId } from './contract.js';

export interface RedisWatchStoreOptions {
  /** A connected `ioredis` or node-redis client, as `RedisStore` takes. */
  client: RedisClientLike;
  /**
   * Put in front of the watch's two keys (`<prefix>{watch}:due`, a sorted set by deadline, and
   * `<prefix>{watch}:payments`, a hash of the entries); the `{watch}` hash tag keeps both in one Cluster slot.
   * @default 'payhook:'
   */
  prefix?: string;
}

// KEYS[1] the sorted set of ids by deadline, KEYS[2] the hash id → entry (JSON without its deadline).
const ADD_SCRIPT = `if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  return 1
end
return 0`;
// Take: the due ids, oldest first, each tried once more and due again at ARGV[2]; returns [entry, …].
const TAKE_SCRIPT = `local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('HGET', KEYS[2], id)
  if v then
    local p = cjson.decode(v)
    p.tries = p.tries + 1
    p.pendingSince = nil
    table.insert(out, cjson.encode(p))
    p.unreachableSince = nil
    redis.call('HSET', KEYS[2], id, cjson.encode(p))
    redis.call('ZADD', KEYS[1], ARGV[2], id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out`;
// Give back: ARGV triples of id, unreachableSince ('' for none) and the deadline its take set; one try less each
// (never below 0), a gone entry left alone. Given back by the entry's latest take (its deadline still the one that
// take set), the earliest of the unreachableSince stored, pending and given is kept; by an earlier take, the one
// given is only held pending (see WatchStore.giveBack).
const GIVE_BACK_SCRIPT = `local function earliest(a, b)
  if a == nil then return b end
  if b == nil or a < b then return a end
  return b
end
for i = 1, #ARGV, 3 do
  local v = redis.call('HGET', KEYS[2], ARGV[i])
  if v then
    local p = cjson.decode(v)
    if p.tries > 0 then p.tries = p.tries - 1 end
    local since = tonumber(ARGV[i + 1])
    local deadline = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[i]))
    if deadline == tonumber(ARGV[i + 2]) then
      p.unreachableSince = earliest(earliest(p.unreachableSince, p.pendingSince), since)
      p.pendingSince = nil
    else
      p.pendingSince = earliest(p.pendingSince, since)
    end
    redis.call('HSET', KEYS[2], ARGV[i], cjson.encode(p))
  end
end
return 0`;
const REMOVE_SCRIPT = `redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])`;

interface Stored {
  orderId: string;
  operation: string;
  createdAt: number;
  tries: number;
  unreachableSince?: number;
  /** The earliest unreachableSince a run given back after a later take (`WatchStore.giveBack`). */
  pendingSince?: number;
}

/**
 * The watch's store in Redis, shared by every instance: one sorted set of deadlines and one hash of entries, each
 * call one Lua script over both (so two runs never take one entry twice).
 *
 * @example
 * import { RedisWatchStore } from '@payhook/core/redis';
 * const watch = createPaymentWatch({ api, webhook, store: new RedisWatchStore({ client: redis }) });
 */
export class RedisWatchStore implements WatchStore {
  readonly name = 'redis';
  readonly #keys: readonly [string, string];
  readonly #run: RunScript;

  constructor(options: RedisWatchStoreOptions) {
    this.#run = scriptRunner(options.client, 'RedisWatchStore');
    const prefix = options.prefix ?? 'payhook:';
    this.#keys = [`${prefix}{watch}:due`, `${prefix}{watch}:payments`];
  }

  async add(payment: WatchedPayment): Promise<boolean> {
    const { orderId, operation, createdAt, tries } = payment;
    // As the client sends the hash field: cjson refuses the `\ud800` escape JSON.stringify writes for a lone
    // surrogate (a string cut inside an emoji), which would fail every take after it.
    const entry: Stored = {
      orderId: wellFormed(orderId),
      operation: wellFormed(operation),
      createdAt,
      tries,
    };
    const added = await this.#script(ADD_SCRIPT, [
      watchId(orderId, operation),
      JSON.stringify(entry),
      String(payment.deadline),
    ]);
    return Number(added) === 1;
  }

  async take(now: number, nextDeadline: number, limit: number): Promise<WatchedPayment[]> {
    const count = String(Math.max(0, Math.floor(limit)));
    const answer = await this.#script(TAKE_SCRIPT, [String(now), String(nextDeadline), count]);
    return (answer as string[]).map((text) => {
      const { unreachableSince, pendingSince: _, ...p } = JSON.parse(text) as Stored;
      const since = unreachableSince === undefined ? {} : { unreachableSince: Number(unreachableSince) };
      return {
        ...p,
        createdAt: Number(p.createdAt),
        tries: Number(p.tries),
        deadline: nextDeadline,
        ...since,
      };
    });
  }

  async giveBack(payments: readonly WatchedPayment[]): Promise<void> {
    if (payments.length === 0) return;
    await this.#script(
      GIVE_BACK_SCRIPT,
      payments.flatMap((p) => [
        entryId(p.orderId, p.operation),
        String(p.unreachableSince ?? ''),
        String(p.deadline),
      ]),
    );
  }

  async remove(orderId: string, operation: string): Promise<boolean> {
    return Number(await this.#script(REMOVE_SCRIPT, [removeId(orderId, operation)])) === 1;
  }

  #script(script: string, args: string[]): Promise<unknown> {
    return this.#run(script, this.#keys, args);
  }
}

/** A lone surrogate as U+FFFD, as UTF-8 encoding writes it. */
function wellFormed(text: string): string {
  return text.replace(/\p{Cs}/gu, '\uFFFD');
}
