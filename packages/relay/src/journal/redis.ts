import {
  type ChannelRecord,
  type ChannelStats,
  type Journal,
  type JournalEntry,
  type JournalEvent,
  type ResolvedRetention,
  type Retention,
  resolveRetention,
} from './contract.js';

/**
 * What the journal needs of a Redis client: `ioredis`'s `callBuffer` (any command, replies as Buffers).
 *
 * @example
 * const client: RedisCommander = new Redis(process.env.REDIS_URL!);
 */
export interface RedisCommander {
  callBuffer(command: string, ...args: (string | number | Buffer | Uint8Array)[]): Promise<unknown>;
}

/**
 * Options of {@link RedisJournal}.
 *
 * @example
 * new RedisJournal({ client: new Redis(process.env.REDIS_URL!), retention: { maxEvents: 1_000 } });
 */
export interface RedisJournalOptions {
  /** A connected `ioredis` client, shared with the rest of the app. */
  client: RedisCommander;
  /**
   * Put in front of every key. The default's `{…}` hash tag keeps every key in one slot of a Redis Cluster; on an
   * ioredis `Cluster` a prefix without one is refused when the journal is built (its scripts span several keys).
   * The journal's keys then all live on one shard: one relay's deliveries, not a merchant's whole data set.
   * @default '{payhook-relay}:'
   */
  prefix?: string;
  /** How long deliveries are kept: see {@link Retention}. */
  retention?: Retention;
  /** The clock, for tests. @default Date.now */
  now?: () => number;
}

// A channel's deliveries are a stream whose entry ids are `<sequence>-0`; its counter is a string key. Appends trim
// the stream to `maxEvents` (XTRIM MINID, Redis 6.2+); reads and stats drop entries past `maxAgeMs` from its head.

const CREATE = `if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1`;

const APPEND = `if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then return -1 end
local seq = redis.call('INCR', KEYS[1])
redis.call('XADD', KEYS[2], seq .. '-0', 't', ARGV[2], 'm', ARGV[3], 'f', ARGV[4], 'h', ARGV[5], 'b', ARGV[6])
local keep = seq - tonumber(ARGV[7]) + 1
if keep > 1 then redis.call('XTRIM', KEYS[2], 'MINID', keep .. '-0') end
return seq`;

// Deletes expired entries from the head (at most 1,000 a call), then answers the last sequence, the oldest kept
// and the last arrival time.
const STATS = `local removed = 0
while removed < 1000 do
  local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
  if #first == 0 then break end
  local fields = first[1][2]
  local t = 0
  for i = 1, #fields, 2 do if fields[i] == 't' then t = tonumber(fields[i + 1]) end end
  if t >= tonumber(ARGV[1]) then break end
  redis.call('XDEL', KEYS[2], first[1][1])
  removed = removed + 1
end
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
local newest = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
local oldest = last + 1
local at = ''
if #first > 0 then oldest = tonumber(string.match(first[1][1], '^(%d+)')) end
if #newest > 0 then
  local fields = newest[1][2]
  for i = 1, #fields, 2 do if fields[i] == 't' then at = fields[i + 1] end end
end
return {last, oldest, at}`;

type StreamEntry = [Buffer, Buffer[]];

function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

function eventOf([id, fields]: StreamEntry): JournalEvent {
  const map = new Map<string, Buffer>();
  for (let i = 0; i < fields.length; i += 2) map.set(fields[i]!.toString('utf8'), fields[i + 1]!);
  return {
    sequence: Number(id.toString('utf8').split('-')[0]),
    receivedAt: Number(map.get('t')!.toString('utf8')),
    mediaType: map.get('m')!.toString('utf8'),
    sender: map.get('f')!.toString('utf8'),
    sha256: map.get('h')!.toString('utf8'),
    body: new Uint8Array(map.get('b')!),
  };
}

/** True when Redis Cluster hashes every key starting with `prefix` by one tag: a non-empty `{…}`, the first. */
function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open >= 0 && prefix.indexOf('}', open + 1) > open + 1;
}

/**
 * The prefix, refused on an ioredis `Cluster` (whose `isCluster` is true) without a hash tag: the scripts touch a
 * channel's counter and stream with the channel and token hashes, which a cluster runs only within one slot.
 */
function checkedPrefix(client: RedisCommander, prefix: string): string {
  if ((client as { isCluster?: unknown }).isCluster === true && !hasHashTag(prefix)) {
    throw new TypeError(
      `[@payhook/relay] prefix must hold a hash tag on Redis Cluster, such as ${JSON.stringify(`{${prefix.replace(/:$/, '')}}:`)}, so that every key of the journal is in one slot, not ${JSON.stringify(prefix)}.`,
    );
  }
  return prefix;
}

/**
 * A journal in Redis, shared by several relay instances. As durable as the server's persistence: with
 * `appendonly yes` and `appendfsync always` an acknowledged delivery survives a crash of Redis; with the default
 * `everysec`, up to a second of them may not. Needs Redis 6.2 or later.
 *
 * @example
 * import { RedisJournal } from '@payhook/relay/redis';
 * const journal = new RedisJournal({ client: new Redis(process.env.REDIS_URL!) });
 */
export class RedisJournal implements Journal {
  readonly #client: RedisCommander;
  readonly #prefix: string;
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;

  constructor(options: RedisJournalOptions) {
    this.#client = options.client;
    this.#prefix = checkedPrefix(options.client, options.prefix ?? '{payhook-relay}:');
    this.#retention = resolveRetention(options.retention);
    this.#now = options.now ?? Date.now;
  }

  #keys(channel: string): { seq: string; events: string } {
    return { seq: `${this.#prefix}ch:${channel}:seq`, events: `${this.#prefix}ch:${channel}:events` };
  }

  async createChannel(channel: ChannelRecord): Promise<boolean> {
    const created = await this.#client.callBuffer(
      'EVAL',
      CREATE,
      2,
      `${this.#prefix}channels`,
      `${this.#prefix}tokens`,
      channel.name,
      channel.tokenHash,
      JSON.stringify(channel),
    );
    return Number(created) === 1;
  }

  async findChannel(name: string): Promise<ChannelRecord | undefined> {
    const value = await this.#client.callBuffer('HGET', `${this.#prefix}channels`, name);
    return value === null ? undefined : (JSON.parse(text(value)) as ChannelRecord);
  }

  async findChannelByToken(tokenHash: string): Promise<ChannelRecord | undefined> {
    const name = await this.#client.callBuffer('HGET', `${this.#prefix}tokens`, tokenHash);
    return name === null ? undefined : this.findChannel(text(name));
  }

  async append(channel: string, entry: JournalEntry): Promise<number> {
    const keys = this.#keys(channel);
    const sequence = Number(
      await this.#client.callBuffer(
        'EVAL',
        APPEND,
        3,
        keys.seq,
        keys.events,
        `${this.#prefix}channels`,
        channel,
        entry.receivedAt,
        entry.mediaType,
        entry.sender,
        entry.sha256,
        Buffer.from(entry.body.buffer, entry.body.byteOffset, entry.body.byteLength),
        this.#retention.maxEvents,
      ),
    );
    if (sequence < 1)
      throw new Error(`[@payhook/relay] no channel ${JSON.stringify(channel)} in this journal.`);
    return sequence;
  }

  async read(channel: string, after: number, limit: number): Promise<JournalEvent[]> {
    const entries = (await this.#client.callBuffer(
      'XRANGE',
      this.#keys(channel).events,
      `${after + 1}-0`,
      '+',
      'COUNT',
      limit,
    )) as StreamEntry[];
    const cutoff = this.#now() - this.#retention.maxAgeMs;
    return entries.map(eventOf).filter((event) => event.receivedAt >= cutoff);
  }

  async stats(channel: string): Promise<ChannelStats> {
    const keys = this.#keys(channel);
    const cutoff = this.#now() - this.#retention.maxAgeMs;
    const [last, oldest, at] = (await this.#client.callBuffer(
      'EVAL',
      STATS,
      2,
      keys.seq,
      keys.events,
      cutoff,
    )) as [number, number, Buffer];
    const lastReceivedAt = text(at) === '' ? undefined : Number(text(at));
    return { last: Number(last), oldest: Number(oldest), lastReceivedAt };
  }

  /** The client is the application's: closing the journal leaves it open. */
  async close(): Promise<void> {}
}
