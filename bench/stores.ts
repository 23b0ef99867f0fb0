import {
  createWebhookHandler,
  type DedupeStore,
  MemoryStore,
  type TransactionalStore,
  type WebhookHandler,
} from '@payhook/core';
import type { PgPoolClientLike, PgQueryable, PgQueryConfig } from '@payhook/core/postgres';
import { createPaymentLedger, type LedgerStore, MemoryLedgerStore } from '@payhook/payments';
import {
  installed,
  type Limit,
  percentiles,
  pgbench,
  pgbenchScript,
  redisPairs,
  type SentQuery,
} from './limits.js';
import {
  createDeliverySource,
  createIdSource,
  formBody,
  notificationJson,
  SECRET,
  signData,
} from './payload.js';
import { rotate, type Spread, spread } from './stats.js';

export interface StoreOptions {
  rounds: number;
  /** Milliseconds of claim-and-commit pairs per store, per concurrency, per round. */
  claimMs: number;
  /** Webhooks handled one after another per store per round, for the added latency. */
  sequential: number;
  /** Pairs in flight at once for the pairs-per-second rows. */
  inFlight: readonly number[];
  /** Seconds of each pgbench run (the server's own limit), per concurrency, per round. */
  limitSeconds: number;
}

/** Latency of one pair (or transaction) in ms: the median over the rounds of each round's p50 and p99. */
export interface Latency {
  p50: number;
  p99: number;
}

/**
 * A store row: claim-and-commit pairs per second at `inFlight` (with their latency, the database's own limit on the
 * same statements, and the per-round ratio to it), or the latency a store adds to one webhook (`µs`).
 */
export interface StoreRow extends Spread {
  name: string;
  unit: 'pairs/s' | 'µs';
  store?: string;
  inFlight?: number;
  latency?: Latency;
  limit?: Spread & { tool: string; latency: Latency };
  ratio?: Spread;
}

/** A store (or a limit) that could not be measured, and why (its server is down, its tool is missing). */
export interface SkippedStore {
  name: string;
  reason: string;
}

/** How a candidate's limit is measured: the tool, and one measurement at a number of clients. */
interface LimitProbe {
  tool: string;
  /** Results are shared between candidates with the same key (the store batched or not: same statements). */
  key: string;
  measure(clients: number, seconds: number): Promise<Limit>;
}

interface Candidate {
  name: string;
  store: DedupeStore | TransactionalStore;
  /** The payment ledger's store on the same server, for the ledger's cost per delivery. */
  ledger: LedgerStore;
  limit?: LimitProbe;
  close: () => Promise<void>;
}

const TABLE = 'payhook_bench_inbox';
const LEDGER_TABLE = 'payhook_bench_ledger';
/** The store's pool size, and pgbench's clients at most: the same number of connections on both sides. */
const POOL = 20;

async function connectRedis(limitAvailable: boolean): Promise<Candidate> {
  const { RedisStore } = await import('@payhook/core/redis');
  const { Redis } = await import('ioredis');
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000 });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw error;
  }
  const prefix = `payhook-bench:${process.pid}:`;
  // The scripts the store sends by SHA-1, recorded from one claim and its commit (which loaded them).
  const evals: unknown[][] = [];
  const recorder = new RedisStore({
    client: Object.assign(Object.create(client) as typeof client, {
      evalsha: (...args: unknown[]) => {
        evals.push(args);
        return (client.evalsha as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    }),
    prefix,
  });
  const claim = await recorder.claim('recorded', 60_000);
  if (claim.status === 'claimed') await recorder.commit('recorded', claim.token, 60_000);
  return {
    name: 'Redis',
    store: new RedisStore({ client, prefix }),
    ledger: new (await import('@payhook/payments/redis')).RedisLedgerStore({ client, prefix }),
    // A store that sends no script (an older one: SET NX and GET) has no script to measure.
    limit:
      limitAvailable && evals.length >= 2
        ? {
            tool: 'redis-benchmark',
            key: 'redis',
            measure: (clients, seconds) =>
              redisPairs(
                url,
                prefix,
                { claim: evals[0]!, commit: evals[1]! },
                clients,
                Math.round(30_000 * seconds),
              ),
          }
        : undefined,
    close: async () => {
      for (let cursor = '0'; ; ) {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
        if (cursor === '0') break;
      }
      client.disconnect();
    },
  };
}

/** The pool, recording what a store sends while `recording` is on (through the pool or a borrowed client). */
function recordingPool<P extends PgQueryable & { connect(): Promise<PgPoolClientLike> }>(pool: P) {
  const sent: SentQuery[] = [];
  const record = (config: string | PgQueryConfig, values?: unknown[]) =>
    sent.push(typeof config === 'string' ? { text: config, values } : config);
  const recorder = {
    query: (config: string | PgQueryConfig, values?: unknown[]) => {
      record(config, values);
      return pool.query(config, values);
    },
    connect: async () => {
      const client = await pool.connect();
      return {
        query: (config: string | PgQueryConfig, values?: unknown[]) => {
          record(config, values);
          return client.query(config, values);
        },
        release: (error?: Error | boolean) => client.release(error),
        escapeLiteral: client.escapeLiteral && ((value: string) => client.escapeLiteral!(value)),
      };
    },
  };
  return { recorder, sent };
}

/** The pgbench scripts of the statements each PostgreSQL store sends for one new key, recorded from a real pair. */
export async function recordScripts(
  pool: PgQueryable & { connect(): Promise<PgPoolClientLike> },
  table = TABLE,
): Promise<{ storeScript: string; inboxScript: string }> {
  const { PostgresStore, PostgresInbox } = await import('@payhook/core/postgres');
  const { recorder, sent } = recordingPool(pool);
  const recordedStore = new PostgresStore({ pool: recorder, table });
  const claim = await recordedStore.claim('recorded-store', 60_000);
  if (claim.status === 'claimed') await recordedStore.commit('recorded-store', claim.token, 3_600_000);
  const storeScript = pgbenchScript(
    sent.splice(0),
    'recorded-store',
    claim.status === 'claimed' ? claim.token : '',
  );
  await new PostgresInbox({ pool: recorder, table }).transaction('recorded-inbox', async () => undefined, {
    lockTimeoutMs: 5_000,
  });
  const inboxScript = pgbenchScript(sent.splice(0), 'recorded-inbox');
  return { storeScript, inboxScript };
}

async function connectPostgres(limitAvailable: boolean): Promise<Candidate[]> {
  const { PostgresStore, PostgresInbox, migrate } = await import('@payhook/core/postgres');
  const { PostgresLedgerStore, migrateLedger } = await import('@payhook/payments/postgres');
  const { default: pg } = await import('pg');
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pool = new pg.Pool({ connectionString: url, max: POOL, connectionTimeoutMillis: 2_000 });
  try {
    await migrate(pool, { table: TABLE });
    await migrateLedger(pool, { table: LEDGER_TABLE });
    await pool.query(`TRUNCATE ${TABLE}, ${LEDGER_TABLE}`);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const { storeScript, inboxScript } = await recordScripts(pool);
  const probe = (key: string, script: string): LimitProbe | undefined =>
    limitAvailable
      ? { tool: 'pgbench', key, measure: (clients, seconds) => pgbench(url, script, clients, seconds) }
      : undefined;
  let open = 3;
  const close = async () => {
    if (--open > 0) return;
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}, ${LEDGER_TABLE}`);
    await pool.end();
  };
  const ledger = new PostgresLedgerStore({ pool, table: LEDGER_TABLE });
  return [
    {
      name: 'PostgreSQL store',
      ledger,
      store: new PostgresStore({ pool, table: TABLE, batch: false }),
      limit: probe('postgres-store', storeScript),
      close,
    },
    {
      name: 'PostgreSQL store, batched',
      ledger,
      store: new PostgresStore({ pool, table: TABLE, batch: true }),
      limit: probe('postgres-store', storeScript),
      close,
    },
    {
      name: 'PostgreSQL inbox (transactional)',
      ledger,
      store: new PostgresInbox({ pool, table: TABLE }),
      limit: probe('postgres-inbox', inboxScript),
      close,
    },
  ];
}

/** One claim and its commit (or one empty transaction), as the handler does for a new notification. */
export async function claimOnce(store: DedupeStore | TransactionalStore, key: string): Promise<void> {
  if ('transaction' in store) {
    const outcome = await store.transaction(key, async () => undefined, { lockTimeoutMs: 5_000 });
    if (outcome.status !== 'done') throw new Error(`${store.name}: ${key} was a duplicate`);
    return;
  }
  const claim = await store.claim(key, 60_000);
  if (claim.status !== 'claimed') throw new Error(`${store.name}: ${key} was ${claim.status}`);
  if ((await store.commit(key, claim.token, 3_600_000)) === false)
    throw new Error(`${store.name}: ${key} stale`);
}

/** Pairs per second with `inFlight` pairs under way at once, and each pair's latency. */
async function pairsPerSecond(candidate: Candidate, inFlight: number, ms: number): Promise<Limit> {
  const nextId = createIdSource();
  const deadline = performance.now() + ms;
  const durations: number[] = [];
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      await claimOnce(candidate.store, `${nextId()}:purchase:success:1000`);
      durations.push(performance.now() - started);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { rate: durations.length / ((performance.now() - started) / 1000), ...percentiles(durations) };
}

/**
 * One limit measurement, tried up to three times: on a shared server a run can fail outright (pgbench prints no
 * tps when a connection is refused: too many clients).
 */
async function measureLimit(
  probe: LimitProbe,
  clients: number,
  seconds: number,
  log: (line: string) => void,
): Promise<Limit> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await probe.measure(clients, seconds);
    } catch (error) {
      if (attempt === 3) throw error;
      log(
        `  ${probe.tool} failed, once more: ${error instanceof Error ? error.message.split('\n')[0] : error}`,
      );
    }
  }
}

/** Mean wall time per webhook through the full handler, one after another. */
async function perWebhook(
  handler: WebhookHandler,
  count: number,
  next: () => { data: string; signature: string } = createDeliverySource(),
): Promise<number> {
  const bodies = Array.from({ length: count }, () => {
    const { data, signature } = next();
    return Buffer.from(formBody(data, signature));
  });
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const started = performance.now();
  for (const body of bodies) {
    const result = await handler({ method: 'POST', headers, body }, undefined);
    if (result.outcome !== 'handled') throw new Error(`answered ${result.outcome}: ${result.body}`);
  }
  return ((performance.now() - started) * 1000) / count;
}

/** Deliveries each of its own order (the payload's share one `order_id`): a ledger row per payment, as in a shop. */
function createOrderSource(): () => { data: string; signature: string } {
  const nextId = createIdSource();
  return () => {
    const id = nextId();
    const json = notificationJson(id).replace('"order-2026-11-22-000187"', `"order-${id}"`);
    const data = Buffer.from(json).toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
    return { data, signature: signData(data) };
  };
}

function handlerWith(store: DedupeStore | TransactionalStore, ledgerStore?: LedgerStore): WebhookHandler {
  // The ledger with one listener, as a merchant's: each delivery is a new payment's first (its row inserted).
  const ledger = ledgerStore && createPaymentLedger({ store: ledgerStore });
  ledger?.onTransition(() => undefined);
  return createWebhookHandler({ secret: SECRET, store, handle: () => undefined, logger: false, ledger });
}

function medianOf(values: readonly number[]): number {
  return spread(values).median;
}

/**
 * Measures each reachable store: pairs per second at each number in flight, beside the database's own limit on
 * the same statements in the same round (pgbench or redis-benchmark, when installed), and the latency the store
 * adds to one webhook (the full handler with it, minus the full handler with MemoryStore, in the same round).
 * Stores whose server is down, and limits whose tool is missing, are skipped with a notice.
 */
export async function runStores(
  options: StoreOptions,
  log: (line: string) => void,
): Promise<{ rows: StoreRow[]; skipped: SkippedStore[] }> {
  const candidates: Candidate[] = [];
  const skipped: SkippedStore[] = [];
  const tools = { pgbench: await installed('pgbench'), redis: await installed('redis-benchmark') };
  if (!tools.pgbench)
    skipped.push({ name: 'PostgreSQL limit (pgbench)', reason: 'pgbench is not installed' });
  if (!tools.redis)
    skipped.push({ name: 'Redis limit (redis-benchmark)', reason: 'redis-benchmark is not installed' });
  for (const [name, connect] of [
    ['Redis', async () => [await connectRedis(tools.redis)]],
    ['PostgreSQL', () => connectPostgres(tools.pgbench)],
  ] as const) {
    try {
      candidates.push(...(await connect()));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      skipped.push({ name, reason });
      log(`  ${name} skipped: ${reason}`);
    }
  }
  type Measures = { rates: number[]; p50: number[]; p99: number[] };
  const measured = new Map<string, Measures>();
  const at = (name: string) => {
    const m = measured.get(name) ?? { rates: [], p50: [], p99: [] };
    measured.set(name, m);
    return m;
  };
  const keep = (name: string, result: Limit) => {
    const m = at(name);
    m.rates.push(result.rate);
    m.p50.push(result.p50);
    m.p99.push(result.p99);
  };
  const added = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  // The payment ledger's cost per delivery: the handler with the store and its ledger, minus with the store alone.
  const memory: Candidate = {
    name: 'MemoryStore',
    store: new MemoryStore(),
    ledger: new MemoryLedgerStore(),
    close: async () => undefined,
  };
  const ledgered = [memory, ...candidates];
  const ledgerAdded = new Map<string, number[]>(ledgered.map((c) => [c.name, []]));
  try {
    for (const candidate of candidates) await pairsPerSecond(candidate, 20, 200); // warm-up: connections, plans
    for (let round = 0; round < options.rounds; round++) {
      for (const inFlight of options.inFlight) {
        for (const candidate of rotate(candidates, round)) {
          const result = await pairsPerSecond(candidate, inFlight, options.claimMs);
          keep(`${candidate.name}@${inFlight}`, result);
          log(
            `  round ${round + 1}, ${inFlight} in flight: ${candidate.name}: ${Math.round(result.rate)} pairs/s`,
          );
        }
        // The limits after the stores, not between them: a store measured right after pgbench ran faster than the
        // same store right before it.
        const probes = new Map(candidates.flatMap((c) => (c.limit ? [[c.limit.key, c.limit] as const] : [])));
        for (const probe of rotate([...probes.values()], round)) {
          const limit = await measureLimit(probe, Math.min(inFlight, POOL), options.limitSeconds, log);
          keep(`${probe.key}@${inFlight}`, limit);
          log(
            `  round ${round + 1}, ${inFlight} in flight: ${probe.tool} (${probe.key}): ${Math.round(limit.rate)}`,
          );
        }
      }
      for (const candidate of rotate(candidates, round)) {
        const inMemory = await perWebhook(handlerWith(new MemoryStore()), options.sequential);
        const withStore = await perWebhook(handlerWith(candidate.store), options.sequential);
        added.get(candidate.name)!.push(withStore - inMemory);
      }
      for (const candidate of rotate(ledgered, round)) {
        const alone = await perWebhook(handlerWith(candidate.store), options.sequential, createOrderSource());
        const withLedger = await perWebhook(
          handlerWith(candidate.store, candidate.ledger),
          options.sequential,
          createOrderSource(),
        );
        ledgerAdded.get(candidate.name)!.push(withLedger - alone);
        log(`  round ${round + 1}: ${candidate.name}: the ledger adds ${Math.round(withLedger - alone)} µs`);
      }
    }
  } finally {
    for (const candidate of candidates) await candidate.close();
  }
  const rows: StoreRow[] = [];
  for (const candidate of candidates) {
    for (const inFlight of options.inFlight) {
      const m = at(`${candidate.name}@${inFlight}`);
      const row: StoreRow = {
        name: `${candidate.name}: pairs per second (${inFlight} in flight)`,
        unit: 'pairs/s',
        store: candidate.name,
        inFlight,
        latency: { p50: medianOf(m.p50), p99: medianOf(m.p99) },
        ...spread(m.rates),
      };
      const limit = candidate.limit && measured.get(`${candidate.limit.key}@${inFlight}`);
      if (candidate.limit && limit) {
        row.limit = {
          tool: `${candidate.limit.tool} -c ${Math.min(inFlight, POOL)}`,
          latency: { p50: medianOf(limit.p50), p99: medianOf(limit.p99) },
          ...spread(limit.rates),
        };
        row.ratio = spread(m.rates.map((rate, i) => rate / limit.rates[i]!));
      }
      rows.push(row);
    }
    rows.push({
      name: `${candidate.name}: added latency per webhook`,
      unit: 'µs',
      store: candidate.name,
      ...spread(added.get(candidate.name)!),
    });
  }
  for (const candidate of ledgered) {
    rows.push({
      name: `${candidate.name}: the payment ledger's added latency per webhook (beside claim and commit alone)`,
      unit: 'µs',
      store: candidate.name,
      ...spread(ledgerAdded.get(candidate.name)!),
    });
  }
  return { rows, skipped };
}
