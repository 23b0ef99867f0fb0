import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { purchaseKey, signedPurchase } from '../../test/bodies.js';
import { base, formRequest, HANDLED } from '../../test/deliveries.js';
import { DATABASE_URL, PGBOUNCER_URL, reachPgBouncer, reachPostgres } from '../../test/servers.js';
import {
  commitAfterLapse,
  expectOnceUnderConcurrency,
  fencesOfTakeovers,
  takeOver,
} from '../../test/takeovers.js';
import { createWebhookHandler } from '../handler.js';
import {
  migrate,
  type PgPoolClientLike,
  type PgQueryConfig,
  PostgresInbox,
  PostgresStore,
} from './postgres.js';

// The PostgreSQL stores behind PgBouncer in transaction mode (Debian 12's 1.18, as scripts/ensure-services.sh starts
// it): each transaction may run on another server connection, so a named prepared statement parsed on one is
// missing on the next (26000), or already there when another client parses it (42P05).

const bouncerUp = (await reachPostgres()) && (await reachPgBouncer());
const TABLE = `payhook_test_bouncer_${process.pid}`;
const APP_TABLE = `payhook_test_bouncer_app_${process.pid}`;

/**
 * The handlers' bounds through the pooler: these tests pin what it does to statements and to once-ness, not how
 * fast a loaded machine answers. With the defaults (2 s a store call, 5 s of waiting for a copy in flight), a call
 * queued for one of PgBouncer's 20 server connections behind every other test file's answered 503 on a CI run.
 * A later CI run answered one of 200 deliveries at once to the inbox 503, its code not recorded; the likeliest
 * cause, the inbox's handler clock running from before its transaction had one of the pool's 20 connections, is
 * fixed, and `burst` now keeps the body of any refusal.
 */
const THROUGH_POOLER = { storeTimeoutMs: 30_000, inFlightWaitMs: 30_000 };

/** Node's warnings while a test runs (`process.emitWarning`), by code. */
const warnings: { code?: string; message: string }[] = [];
const onWarning = (warning: Error & { code?: string }) =>
  void warnings.push({ code: warning.code, message: warning.message });

describe.skipIf(!bouncerUp)('the PostgreSQL stores through PgBouncer in transaction mode', () => {
  let direct: pg.Pool;
  let pooled: pg.Pool;

  beforeAll(async () => {
    direct = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    pooled = new pg.Pool({ connectionString: PGBOUNCER_URL, max: 20 });
    pooled.on('error', () => {});
    await direct.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
    // migrate() through the pooler, from four instances at once: its advisory lock is a transaction's.
    await Promise.all(Array.from({ length: 4 }, () => migrate(pooled, { table: TABLE })));
    await migrate(pooled, { table: TABLE });
    await pooled.query(`CREATE TABLE ${APP_TABLE} (payment_id text PRIMARY KEY, runs int NOT NULL)`);
    process.on('warning', onWarning);
  });

  afterEach(() => {
    warnings.length = 0;
  });

  afterAll(async () => {
    process.off('warning', onWarning);
    await pooled?.end();
    await direct?.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
    await direct?.end();
  });

  /** Deliveries of `count` new notifications at once to a handler on `store`: 200, or the status and body of a refusal. */
  async function burst(store: PostgresStore | PostgresInbox<pg.PoolClient>, count: number) {
    const webhook = createWebhookHandler({ ...base(store), ...THROUGH_POOLER, handle: () => undefined });
    const answers = await Promise.all(
      Array.from({ length: count }, () => webhook(formRequest(signedPurchase()), undefined)),
    );
    return answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${a.body}`));
  }

  it('migrate() made the table through the pooler, with its primary key and expiry index', async () => {
    const indexes = await direct.query('SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY 1', [
      TABLE,
    ]);
    expect(indexes.rows.map((r) => r.indexname)).toEqual([`${TABLE}_expires_at_idx`, `${TABLE}_pkey`]);
  });

  it.each([
    ['PostgresStore (batched)', () => new PostgresStore({ pool: pooled, table: TABLE })],
    ['PostgresStore, batch: false', () => new PostgresStore({ pool: pooled, table: TABLE, batch: false })],
    ['PostgresInbox', () => new PostgresInbox({ pool: pooled, table: TABLE })],
  ])(
    '%s with the default options answers 200 to 200 deliveries at once, and warns at most once',
    async (_, make) => {
      const statuses = await burst(make(), 200);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(warnings.length).toBeLessThanOrEqual(1);
    },
  );

  it('PostgresStore, batch: false: says once that the pooler cannot keep named statements, naming prepare: false', async () => {
    // Unbatched, nearly every delivery parses a statement on a server connection another client parsed it on.
    const statuses = await burst(new PostgresStore({ pool: pooled, table: TABLE, batch: false }), 200);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(warnings).toEqual([
      {
        code: 'PAYHOOK_UNNAMED_STATEMENTS',
        message: expect.stringMatching(
          /^\[@payhook\/core\] PostgresStore: PostgreSQL answered "prepared statement "payhook_[0-9a-f]{16}" (already exists|does not exist)" to a named prepared statement, as it does behind a pooler that runs each transaction on any of its connections \(PgBouncer in transaction mode before 1\.21, or later without max_prepared_statements\)\. The store sends unnamed statements from now on, that one again first; pass prepare: false to start that way\.$/,
        ),
      },
    ]);
  });

  it('prepare: false sends nothing named and never warns', async () => {
    const statuses = await burst(
      new PostgresStore({ pool: pooled, table: TABLE, batch: false, prepare: false }),
      100,
    );
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  describe.each([
    ['batched', true],
    ['unbatched', false],
  ])('PostgresStore (%s) through the pooler', (_, batch) => {
    const make = () => new PostgresStore({ pool: pooled, table: TABLE, batch });
    const expire = (key: string) =>
      direct.query(`UPDATE ${TABLE} SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);

    it('grants one of 64 concurrent claims, and runs the handler once for 64 concurrent copies', async () => {
      const key = await expectOnceUnderConcurrency(make(), THROUGH_POOLER);
      const row = await direct.query(`SELECT done FROM ${TABLE} WHERE key = $1`, [key]);
      expect(row.rows).toEqual([{ done: true }]);
    });

    it('counts fences across takeovers, refuses a stale commit, and commits a lapsed lease nobody took', async () => {
      const store = make();
      expect(await fencesOfTakeovers(store, expire)).toEqual([1, 2, 3]);
      const key = randomUUID();
      const { stale, current } = await takeOver(store, key, expire);
      expect(await store.commit(key, stale.token, 60_000)).toBe(false);
      expect(await store.commit(key, current.token, 60_000)).toBe(true);
      expect(await commitAfterLapse(store, expire)).toMatchObject({ committed: true });
    });
  });

  describe('PostgresInbox through the pooler', () => {
    function writing(inbox: PostgresInbox<pg.PoolClient>, fail: () => boolean) {
      let runs = 0;
      const webhook = createWebhookHandler({
        ...base(inbox),
        ...THROUGH_POOLER,
        handle: async (n, _context, delivery) => {
          runs++;
          await inbox
            .client(delivery)
            .query(
              `INSERT INTO ${APP_TABLE} (payment_id, runs) VALUES ($1, 1) ON CONFLICT (payment_id) DO UPDATE SET runs = ${APP_TABLE}.runs + 1`,
              [n.payment_id],
            );
          if (fail()) throw new Error('the courier is down');
        },
      });
      return { webhook, runs: () => runs };
    }

    it('rolls the merchant write back with the row on a failure, commits both on the redelivery, then duplicate', async () => {
      const inbox = new PostgresInbox({ pool: pooled, table: TABLE });
      let fail = true;
      const { webhook, runs } = writing(inbox, () => fail);
      const paymentId = randomUUID();
      const body = signedPurchase(paymentId);
      expect((await webhook(formRequest(body), undefined)).status).toBe(500);
      fail = false;
      expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
      expect((await webhook(formRequest(body), undefined)).body).toBe('{"ok":true,"outcome":"duplicate"}');
      expect(runs()).toBe(2);
      const app = await direct.query(`SELECT runs FROM ${APP_TABLE} WHERE payment_id = $1`, [paymentId]);
      expect(app.rows).toEqual([{ runs: 1 }]);
      const row = await direct.query(`SELECT done FROM ${TABLE} WHERE key = $1`, [purchaseKey(paymentId)]);
      expect(row.rows).toEqual([{ done: true }]);
    });

    it('64 concurrent copies: one write, the others duplicate', async () => {
      const inbox = new PostgresInbox({ pool: pooled, table: TABLE });
      const { webhook, runs } = writing(inbox, () => false);
      const paymentId = randomUUID();
      const body = signedPurchase(paymentId);
      const answers = await Promise.all(
        Array.from({ length: 64 }, () => webhook(formRequest(body), undefined)),
      );
      // A copy still waiting on the row after inFlightWaitMs answers 409; each other one is 200.
      expect(answers.filter((a) => a.body === HANDLED)).toHaveLength(1);
      expect(answers.filter((a) => a.status !== 200 && a.status !== 409).map((a) => a.body)).toEqual([]);
      expect(runs()).toBe(1);
      const app = await direct.query(`SELECT runs FROM ${APP_TABLE} WHERE payment_id = $1`, [paymentId]);
      expect(app.rows).toEqual([{ runs: 1 }]);
    });
  });
});

/**
 * A pool in front of a pooler that runs each query on one of `servers` connections in turn, each holding the
 * named statements parsed on it, with `pg`'s own bookkeeping per client (a name parsed once is then only bound):
 * the two errors PgBouncer in transaction mode leads to, without a server.
 */
function roundRobinPooler(servers: number) {
  const held = Array.from({ length: servers }, () => new Set<string>());
  let next = 0;
  const sent: PgQueryConfig[] = [];
  const client = (parsed = new Set<string>()): PgPoolClientLike => ({
    query: async (config) => {
      const q = typeof config === 'string' ? { text: config } : config;
      sent.push(q);
      const server = held[next++ % servers]!;
      if (q.name !== undefined) {
        if (!parsed.has(q.name) && server.has(q.name)) {
          throw Object.assign(new Error(`prepared statement "${q.name}" already exists`), { code: '42P05' });
        }
        if (parsed.has(q.name) && !server.has(q.name)) {
          throw Object.assign(new Error(`prepared statement "${q.name}" does not exist`), { code: '26000' });
        }
        parsed.add(q.name);
        server.add(q.name);
      }
      return { rows: [{ fence: 1, key: 'k' }], rowCount: 1, command: 'INSERT' };
    },
    release: () => undefined,
  });
  const clients = [client(), client()];
  let lent = 0;
  return {
    sent,
    pool: {
      query: (config: string | PgQueryConfig) => clients[lent++ % 2]!.query(config),
      connect: async () => clients[lent++ % 2]!,
    },
  };
}

/** Node emits a warning on the next tick, which a chain of settled promises alone never reaches. */
const warned = () => new Promise((resolve) => setImmediate(resolve));

describe('a pooler that cannot keep named statements, simulated', () => {
  beforeAll(() => {
    process.on('warning', onWarning);
  });
  afterEach(async () => {
    // A warning is emitted on the next tick: one from a test that ended first must not reach the next one.
    await warned();
    warnings.length = 0;
  });
  afterAll(() => {
    process.off('warning', onWarning);
  });

  it('PostgresStore answers every call, warns once, and sends nothing named after the first refusal', async () => {
    const { pool, sent } = roundRobinPooler(3);
    const store = new PostgresStore({ pool, batch: false });
    for (let i = 0; i < 10; i++) expect((await store.claim(`k${i}`, 1_000)).status).toBe('claimed');
    await warned();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('pass prepare: false to start that way.');
    const firstUnnamed = sent.findIndex((q) => q.name === undefined);
    expect(firstUnnamed).toBeGreaterThan(0);
    expect(sent.slice(firstUnnamed).every((q) => q.name === undefined)).toBe(true);
    // The refused statement went again unnamed, the same text: nothing ran twice, nothing was lost.
    expect(sent[firstUnnamed]!.text).toBe(sent[firstUnnamed - 1]!.text);
  });

  it('a second store on the same pool warns for itself, once', async () => {
    const { pool } = roundRobinPooler(3);
    for (const store of [new PostgresStore({ pool }), new PostgresStore({ pool })]) {
      for (let i = 0; i < 6; i++) await store.claim(`k${i}`, 1_000);
    }
    await warned();
    expect(warnings.map((w) => w.code)).toEqual(['PAYHOOK_UNNAMED_STATEMENTS', 'PAYHOOK_UNNAMED_STATEMENTS']);
  });

  it('PostgresInbox: two transactions whose named claims are refused at once both go on unnamed', async () => {
    const inFlight: (() => void)[] = [];
    const client: PgPoolClientLike = {
      query: async (config) => {
        const q = typeof config === 'string' ? { text: config } : config;
        if (q.name !== undefined) {
          // Both named claims are sent before either refusal arrives, as on a busy pooler: the second is refused
          // after the first turned names off.
          await new Promise<void>((resolve) => {
            inFlight.push(resolve);
            if (inFlight.length === 2) for (const release of inFlight) release();
          });
          throw Object.assign(new Error(`prepared statement "${q.name}" does not exist`), { code: '26000' });
        }
        return { rows: [{ fence: 1, key: 'k' }], rowCount: 1, command: 'INSERT' };
      },
      release: () => undefined,
    };
    const inbox = new PostgresInbox({ pool: { query: (c) => client.query(c), connect: async () => client } });
    const results = await Promise.all(['k1', 'k2'].map((key) => inbox.transaction(key, async () => 'ran')));
    expect(results).toEqual([
      { status: 'done', value: 'ran' },
      { status: 'done', value: 'ran' },
    ]);
    expect(inFlight).toHaveLength(2);
    await warned();
    expect(warnings).toHaveLength(1);
  });

  it('PostgresInbox goes on with BEGIN and an unnamed claim once its prepared claim moved between connections', async () => {
    const { pool, sent } = roundRobinPooler(3);
    const inbox = new PostgresInbox({ pool });
    for (let i = 0; i < 6; i++) {
      const result = await inbox.transaction(`k${i}`, async () => 'ran');
      expect(result).toEqual({ status: 'done', value: 'ran' });
    }
    await warned();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/^\[@payhook\/core\] PostgresInbox: PostgreSQL answered/);
    expect(sent.at(-2)).toEqual({
      text: expect.stringContaining('INSERT INTO'),
      values: ['k5', 604_800_000],
    });
  });
});
