import { type RedisClientLike, type RunScript, scriptRunner } from '@payhook/core/redis';
import type { Appended, LedgerStore } from './contract.js';
import type { LedgerFact } from './fact.js';

export interface RedisLedgerStoreOptions {
  /** A connected `ioredis` or node-redis client, as `RedisStore` takes. */
  client: RedisClientLike;
  /**
   * Put in front of each payment's two keys (`<prefix>ledger:{<order_id>}:log`, a list of facts, and
   * `…:keys`, a hash of delivery key → position); the `{order_id}` hash tag keeps both in one Cluster slot, so the
   * payments spread over the cluster's masters (on a cluster, an order id starting with `}` is tagged
   * `{#<order_id>}`, and a prefix holding an empty `{}` is refused when the store is built).
   * @default 'payhook:'
   */
  prefix?: string;
  /**
   * How long a payment's log is kept after its last notification.
   * @default 7_776_000_000 (90 days)
   */
  ttlMs?: number;
}

// KEYS[1] the log (a list of facts as JSON), KEYS[2] the hash delivery key → position. ARGV: key, fact, ttl ms.
// Answers { position, the whole log }: one round trip per delivery.
const APPEND_SCRIPT = `local at = redis.call('HGET', KEYS[2], ARGV[1])
if not at then
  at = redis.call('RPUSH', KEYS[1], ARGV[2]) - 1
  redis.call('HSET', KEYS[2], ARGV[1], at)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {tonumber(at), redis.call('LRANGE', KEYS[1], 0, -1)}`;

/** The tag Redis Cluster hashes `key` by (the text of its first `{…}` when not empty), or `undefined`: the whole key. */
function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** An ioredis `Cluster` (`isCluster`) or a node-redis cluster (`getSlotMaster`). */
function isCluster(client: RedisClientLike): boolean {
  const methods = client as { isCluster?: unknown; getSlotMaster?: unknown };
  return methods.isCluster === true || typeof methods.getSlotMaster === 'function';
}

/**
 * The ledger's store in Redis, shared by every instance: each payment's log a list, appended by one Lua script per
 * delivery (atomic: concurrent deliveries of one payment are put in one order every instance reads).
 *
 * @example
 * import { RedisLedgerStore } from '@payhook/payments/redis';
 * const ledger = createPaymentLedger({ store: new RedisLedgerStore({ client: redis }) });
 */
export class RedisLedgerStore implements LedgerStore {
  readonly name = 'redis';
  readonly #run: RunScript;
  readonly #prefix: string;
  readonly #ttl: string;
  /** On a cluster: an order id that would leave its `{…}` tag empty is tagged `{#<order_id>}` instead. */
  readonly #cluster: boolean;

  constructor(options: RedisLedgerStoreOptions) {
    this.#run = scriptRunner(options.client, 'RedisLedgerStore');
    this.#prefix = options.prefix ?? 'payhook:';
    this.#cluster = isCluster(options.client);
    if (this.#cluster && hashTag(`${this.#prefix}ledger:{#}`) === undefined) {
      throw new TypeError(
        `[@payhook/payments] RedisLedgerStore prefix must not hold an empty hash tag ("{}") on Redis Cluster: each payment's two keys would then be in two slots, not ${JSON.stringify(this.#prefix)}.`,
      );
    }
    this.#ttl = String(Math.max(1, Math.ceil(options.ttlMs ?? 90 * 24 * 60 * 60 * 1000)));
  }

  async append(orderId: string, fact: LedgerFact): Promise<Appended> {
    const keys = this.#keys(orderId);
    const answer = (await this.#run(APPEND_SCRIPT, keys, [fact.k, JSON.stringify(fact), this.#ttl])) as [
      number,
      string[],
    ];
    return { at: Number(answer[0]), log: answer[1].map((text) => JSON.parse(text) as LedgerFact) };
  }

  async read(orderId: string): Promise<readonly LedgerFact[]> {
    // A script, as append: every client the stores take runs one the same way.
    const log = (await this.#run("return redis.call('LRANGE', KEYS[1], 0, -1)", this.#keys(orderId), [])) as
      | string[]
      | null;
    return (log ?? []).map((text) => JSON.parse(text) as LedgerFact);
  }

  #keys(orderId: string): [string, string] {
    let base = `${this.#prefix}ledger:{${orderId}}`;
    // An order id starting with `}` leaves the tag empty, and a cluster would hash the log and its keys apart. Only
    // on a cluster (where such a payment could not be recorded before), so no key kept on one Redis moves.
    if (this.#cluster && hashTag(base) === undefined) base = `${this.#prefix}ledger:{#${orderId}}`;
    return [`${base}:log`, `${base}:keys`];
  }
}
