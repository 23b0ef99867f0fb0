import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { purchaseKey, signedPurchase } from '../../test/bodies.js';
import { base, formRequest } from '../../test/deliveries.js';
import { CuttableProxy, DATABASE_URL, reachPostgres } from '../../test/servers.js';
import {
  commitAfterLapse,
  expectOnceUnderConcurrency,
  fencesOfTakeovers,
  takeOver,
} from '../../test/takeovers.js';
import { createWebhookHandler } from '../handler.js';
import {
  inboxClient,
  migrate,
  migrationSql,
  type PgQueryable,
  type PgQueryConfig,
  PostgresInbox,
  PostgresStore,
} from './postgres.js';

const postgresUp = await reachPostgres();
// One table per test file and process, so parallel files and engineers never share rows.
const TABLE = `payhook_test_unit_${process.pid}`;
const APP_TABLE = `payhook_test_unit_app_${process.pid}`;

function createPool(connectionString = DATABASE_URL): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => {}); // an idle connection cut by the outage test
  return pool;
}

describe('migrationSql', () => {
  it('is what the package ships as migrations/payhook_inbox.sql', () => {
    const shipped = readFileSync(new URL('../../migrations/payhook_inbox.sql', import.meta.url), 'utf8');
    expect(shipped).toBe(migrationSql());
  });

  it('quotes a schema-qualified table and names the index in the table schema', () => {
    const sql = migrationSql('billing.inbox');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "billing"."inbox" (');
    expect(sql).toContain(
      'CREATE INDEX IF NOT EXISTS "inbox_expires_at_idx" ON "billing"."inbox" (expires_at);',
    );
  });

  it.each(['inbox; DROP TABLE users', 'a.b.c', '1inbox', 'in-box', ''])(
    'refuses the table name %j',
    (table) => {
      expect(() => migrationSql(table)).toThrow(
        `[@payhook/core] the inbox table name ${JSON.stringify(table)} is not a plain identifier (schema.table of letters, digits and _).`,
      );
    },
  );
});

describe.skipIf(!postgresUp)('PostgreSQL stores', () => {
  let pool: pg.Pool;
  let store: PostgresStore;

  beforeAll(async () => {
    pool = createPool();
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
    // Concurrent first runs, as several instances starting together: the advisory lock serialises them.
    await Promise.all(Array.from({ length: 4 }, () => migrate(pool, { table: TABLE })));
    await migrate(pool, { table: TABLE });
    await pool.query(`CREATE TABLE ${APP_TABLE} (payment_id text PRIMARY KEY, amount numeric NOT NULL)`);
    store = new PostgresStore({ pool, table: TABLE });
  });

  afterAll(async () => {
    await pool?.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
    await pool?.end();
  });

  async function row(key: string) {
    const result = await pool.query(
      `SELECT done, token, expires_at > now() AS live,
              round(extract(epoch FROM expires_at - now()))::int AS seconds, fence::int AS fence
       FROM ${TABLE} WHERE key = $1`,
      [key],
    );
    return result.rows[0] as
      | { done: boolean; token: string | null; live: boolean; seconds: number; fence: number }
      | undefined;
  }

  describe('migrate', () => {
    it('creates the primary key on key and the expiry index', async () => {
      const result = await pool.query(
        'SELECT indexdef FROM pg_indexes WHERE tablename = $1 ORDER BY indexname',
        [TABLE],
      );
      expect(result.rows.map((r) => r.indexdef)).toEqual([
        `CREATE INDEX ${TABLE}_expires_at_idx ON public.${TABLE} USING btree (expires_at)`,
        `CREATE UNIQUE INDEX ${TABLE}_pkey ON public.${TABLE} USING btree (key)`,
      ]);
    });

    it('plans the claim on the primary key and prune on the expiry index over 50,000 rows', async () => {
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at)
         SELECT 'plan-' || i, true, now() + (i % 100 - 2) * interval '1 hour' FROM generate_series(1, 50000) AS i`,
      );
      await pool.query(`ANALYZE ${TABLE}`);
      const plan = async (sql: string, values: unknown[]) =>
        JSON.stringify((await pool.query(`EXPLAIN (FORMAT JSON) ${sql}`, values)).rows[0]['QUERY PLAN']);
      const claim = await plan(
        `INSERT INTO ${TABLE} AS i (key, done, token, expires_at) VALUES ($1, false, $2, now())
         ON CONFLICT (key) DO UPDATE SET token = excluded.token WHERE i.expires_at <= now() RETURNING 1`,
        ['plan-7', 'token'],
      );
      expect(claim).toContain(`"Conflict Arbiter Indexes":["${TABLE}_pkey"]`);
      const lookup = await plan(`SELECT done FROM ${TABLE} WHERE key = $1 AND expires_at > now()`, [
        'plan-7',
      ]);
      expect(lookup).toContain(`"Index Name":"${TABLE}_pkey"`);
      const prune = await plan(
        `SELECT key FROM ${TABLE} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [100],
      );
      expect(prune).toContain(`"Index Name":"${TABLE}_expires_at_idx"`);
      await pool.query(`DELETE FROM ${TABLE} WHERE key LIKE 'plan-%'`);
    });
  });

  describe('migrate on a table made before fences', () => {
    const OLD = `${TABLE}_old`;
    afterAll(async () => {
      await pool.query(`DROP TABLE IF EXISTS ${OLD}`);
    });

    it('adds the fence column once, keeps the rows, and the stores count from there', async () => {
      await pool.query(`DROP TABLE IF EXISTS ${OLD}`);
      await pool.query(`CREATE TABLE ${OLD} (key text PRIMARY KEY, done boolean NOT NULL DEFAULT false,
        token text, expires_at timestamptz NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
      await pool.query(
        `INSERT INTO ${OLD} (key, done, expires_at) VALUES ('kept', true, now() + interval '1 hour')`,
      );
      await migrate(pool, { table: OLD });
      await migrate(pool, { table: OLD });
      const columns = await pool.query(
        `SELECT column_name, data_type, column_default FROM information_schema.columns
         WHERE table_name = $1 AND column_name = 'fence'`,
        [OLD],
      );
      expect(columns.rows).toEqual([{ column_name: 'fence', data_type: 'bigint', column_default: '0' }]);
      const old = new PostgresStore({ pool, table: OLD });
      expect(await old.claim('kept', 60_000)).toEqual({ status: 'duplicate' });
      expect(await old.claim('new', 60_000)).toMatchObject({ status: 'claimed', fence: 1 });
    });

    it('names migrate when the table is missing or older than the stores, for the store and the inbox', async () => {
      await pool.query(`DROP TABLE IF EXISTS ${OLD}`);
      const missing = `[@payhook/core] the inbox table "${OLD}" does not exist: run migrate(pool, { table: '${OLD}' }) from @payhook/core/postgres (or its migrations/payhook_inbox.sql) before the first delivery, and again after upgrading payhook.`;
      await expect(new PostgresStore({ pool, table: OLD, batch: false }).claim('k', 60_000)).rejects.toThrow(
        missing,
      );
      await expect(new PostgresInbox({ pool, table: OLD }).transaction('k', async () => 1)).rejects.toThrow(
        missing,
      );
      await pool.query(`CREATE TABLE ${OLD} (key text PRIMARY KEY, done boolean NOT NULL DEFAULT false,
        token text, expires_at timestamptz NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
      await expect(new PostgresStore({ pool, table: OLD }).claim('k', 60_000)).rejects.toThrow(
        `[@payhook/core] the inbox table "${OLD}" was made by an earlier payhook: run migrate(pool, { table: '${OLD}' })`,
      );
    });
  });

  describe('PostgresStore', () => {
    /** Ends the key's lease as if it had run out, keeping the row (and its fence). */
    async function expire(key: string) {
      await pool.query(`UPDATE ${TABLE} SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    }

    it('claims a new key with fence 1 and a token, answers in_flight while leased, duplicate once committed', async () => {
      const key = randomUUID();
      const claim = await store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      expect(claim.token).toMatch(/^[0-9a-f]{32}$/);
      expect(claim.fence).toBe(1);
      expect(await row(key)).toEqual({ done: false, token: claim.token, live: true, seconds: 60, fence: 1 });
      expect(await store.claim(key, 60_000)).toEqual({ status: 'in_flight' });
      expect(await store.commit(key, claim.token, 3_600_000)).toBe(true);
      expect(await row(key)).toEqual({ done: true, token: claim.token, live: true, seconds: 3600, fence: 1 });
      expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
      expect(await store.commit(key, claim.token, 3_600_000)).toBe(false);
    });

    it('each takeover of a lease that ran out gets the next fence', async () => {
      expect(await fencesOfTakeovers(store, expire)).toEqual([1, 2, 3]);
    });

    it('forget deletes a done row and leaves a leased one (its fence with it)', async () => {
      const [done, leased] = [randomUUID(), randomUUID()];
      const claim = await store.claim(done, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await store.commit(done, claim.token, 3_600_000);
      await store.claim(leased, 60_000);
      await store.forget(done);
      await store.forget(leased);
      expect(await row(done)).toBeUndefined();
      expect(await row(leased)).toMatchObject({ done: false, live: true, fence: 1 });
    });

    it('a stale commit answers false, writes nothing and leaves the newer claim lease intact', async () => {
      const key = randomUUID();
      const { stale, current } = await takeOver(store, key, expire);
      const { token } = current;
      expect(current.fence).toBe(2);
      expect(await store.commit(key, stale.token, 3_600_000)).toBe(false);
      expect(await row(key)).toEqual({ done: false, token, live: true, seconds: 60, fence: 2 });
      expect(await store.renew(key, stale.token, 60_000)).toBe(false);
      expect(await store.commit(key, token, 3_600_000)).toBe(true);
      expect(await row(key)).toEqual({ done: true, token, live: true, seconds: 3600, fence: 2 });
    });

    it('release ends only the caller own lease and keeps the row, so the next claim counts on', async () => {
      const key = randomUUID();
      const { stale: late, current } = await takeOver(store, key, expire);
      await store.release(key, late.token);
      expect((await row(key))?.token).toBe(current.token);
      await store.release(key, current.token);
      expect(await row(key)).toMatchObject({ done: false, live: false, fence: 2 });
      expect(await store.claim(key, 60_000)).toMatchObject({ status: 'claimed', fence: 3 });
    });

    it('commit marks done when the caller lease ran out and nobody took it (the work ran once)', async () => {
      const { key, token, committed } = await commitAfterLapse(store, expire);
      expect(committed).toBe(true);
      await store.release(key, token);
      expect(await row(key)).toEqual({ done: true, token, live: true, seconds: 60, fence: 1 });
    });

    it('commit marks done when the row was pruned meanwhile', async () => {
      const key = randomUUID();
      const claim = await store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await pool.query(`DELETE FROM ${TABLE} WHERE key = $1`, [key]);
      expect(await store.commit(key, claim.token, 60_000)).toBe(true);
      expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
    });

    it('claims a key whose done row has expired (TTL on read)', async () => {
      const key = randomUUID();
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at) VALUES ($1, true, now() - interval '1 ms')`,
        [key],
      );
      expect((await store.claim(key, 60_000)).status).toBe('claimed');
    });

    it('unbatched: grants one of 64 concurrent claims, and runs the handler once for 64 concurrent copies', async () => {
      const key = await expectOnceUnderConcurrency(new PostgresStore({ pool, table: TABLE, batch: false }));
      expect((await row(key))?.done).toBe(true);
    });

    it('prune deletes at most limit expired rows per call, oldest first, and never a live one', async () => {
      await pool.query(`DELETE FROM ${TABLE}`);
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at)
         SELECT 'old-' || i, true, now() - i * interval '1 minute' FROM generate_series(1, 25) AS i`,
      );
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at)
         SELECT 'live-' || i, true, now() + interval '1 hour' FROM generate_series(1, 5) AS i`,
      );
      expect(await store.prune({ limit: 10 })).toBe(10);
      const left = await pool.query(
        `SELECT key FROM ${TABLE} WHERE key LIKE 'old-%' ORDER BY expires_at DESC`,
      );
      expect(left.rows.map((r) => r.key)).toEqual(Array.from({ length: 15 }, (_, i) => `old-${i + 1}`));
      expect(await store.prune({ limit: 10 })).toBe(10);
      expect(await store.prune({ limit: 10 })).toBe(5);
      expect(await store.prune()).toBe(0);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${TABLE}`)).rows[0].n).toBe(5);
    });
  });

  describe('statements', () => {
    /** The pool, recording each statement sent through it. */
    function recording() {
      const sent: PgQueryConfig[] = [];
      const queryable: PgQueryable = {
        query: (config, values) => {
          sent.push(typeof config === 'string' ? { text: config, values } : config);
          return pool.query(config as pg.QueryConfig, values);
        },
      };
      return { queryable, sent };
    }

    it('sends every statement named, one name per text and table, and unnamed with prepare: false', async () => {
      const { queryable, sent } = recording();
      const named = new PostgresStore({ pool: queryable, table: TABLE });
      const key = randomUUID();
      const claim = await named.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await named.renew(key, claim.token, 60_000);
      await named.commit(key, claim.token, 60_000);
      expect(await named.claim(key, 60_000)).toEqual({ status: 'duplicate' });
      expect(sent.map((q) => q.name)).toEqual([
        expect.stringMatching(/^payhook_[0-9a-f]{16}$/),
        expect.stringMatching(/^payhook_[0-9a-f]{16}$/),
        expect.stringMatching(/^payhook_[0-9a-f]{16}$/),
        sent[0]!.name,
        expect.stringMatching(/^payhook_[0-9a-f]{16}$/),
      ]);
      expect(new Set(sent.map((q) => q.name)).size).toBe(4);
      sent.length = 0;
      const plain = new PostgresStore({ pool: queryable, table: TABLE, prepare: false });
      await plain.claim(randomUUID(), 60_000);
      expect(sent).toEqual([{ text: expect.stringContaining('INSERT INTO'), values: expect.any(Array) }]);
    });

    describe('batched', () => {
      it('sends a lone claim and a lone commit at once, each as one statement', async () => {
        const { queryable, sent } = recording();
        const batched = new PostgresStore({ pool: queryable, table: TABLE, batch: true });
        const key = randomUUID();
        const claiming = batched.claim(key, 60_000);
        // Sent before claim() returned: no timer, no tick waited for.
        expect(sent).toHaveLength(1);
        const claim = await claiming;
        if (claim.status !== 'claimed') throw new Error('expected a claim');
        const committing = batched.commit(key, claim.token, 60_000);
        expect(sent).toHaveLength(2);
        expect(await committing).toBe(true);
        expect(sent).toHaveLength(2);
      });

      it('groups claims made while others are under way, each caller getting its own answer', async () => {
        const { queryable, sent } = recording();
        const batched = new PostgresStore({ pool: queryable, table: TABLE, batch: true });
        const done = randomUUID();
        const first = await batched.claim(done, 60_000);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await batched.commit(done, first.token, 60_000);
        const leased = randomUUID();
        await batched.claim(leased, 60_000);
        sent.length = 0;
        const fresh = Array.from({ length: 40 }, () => randomUUID());
        const keys = [...fresh, done, leased, fresh[0]!];
        const claims = await Promise.all(keys.map((key) => batched.claim(key, 60_000)));
        // Four lanes go at once, one claim each; the other 39 wait and go together: one INSERT, one SELECT.
        expect(sent).toHaveLength(4 + 2);
        expect(claims.slice(0, 40).map((c) => c.status)).toEqual(Array(40).fill('claimed'));
        expect(claims.slice(40)).toEqual([
          { status: 'duplicate' },
          { status: 'in_flight' },
          { status: 'in_flight' },
        ]);
        expect(new Set(claims.map((c) => (c.status === 'claimed' ? c.token : c.status))).size).toBe(42);
        const commits = await Promise.all(
          claims
            .slice(0, 40)
            .map((c, i) => batched.commit(fresh[i]!, c.status === 'claimed' ? c.token : '', 60_000)),
        );
        expect(commits).toEqual(Array(40).fill(true));
        expect(sent).toHaveLength(6 + 4 + 1);
      });

      it('answers copies of one key in a batch from its first claim: a replay flood costs no extra round trips', async () => {
        const { queryable, sent } = recording();
        const batched = new PostgresStore({ pool: queryable, table: TABLE, batch: true });
        const lanes = Array.from({ length: 4 }, () => randomUUID());
        const replayed = randomUUID();
        const others = Array.from({ length: 10 }, () => randomUUID());
        const keys = [...lanes, ...Array<string>(40).fill(replayed), ...others];
        const claims = await Promise.all(keys.map((key) => batched.claim(key, 60_000)));
        // Four lanes at once, then everything else together in one INSERT (it was an INSERT and a SELECT per copy).
        expect(sent).toHaveLength(4 + 1);
        expect(claims.slice(4, 44).map((c) => c.status)).toEqual(['claimed', ...Array(39).fill('in_flight')]);
        expect(claims.slice(44).map((c) => c.status)).toEqual(Array(10).fill('claimed'));
      });

      it('refuses a stale commit inside a batch and commits the others', async () => {
        const batched = new PostgresStore({ pool, table: TABLE, batch: true });
        const key = randomUUID();
        const stale = await batched.claim(key, 60_000);
        if (stale.status !== 'claimed') throw new Error('expected a claim');
        await pool.query(`UPDATE ${TABLE} SET expires_at = now() - interval '1 second' WHERE key = $1`, [
          key,
        ]);
        const current = await batched.claim(key, 60_000);
        if (current.status !== 'claimed') throw new Error('expected a takeover');
        const others = await Promise.all(
          Array.from({ length: 6 }, () => batched.claim(randomUUID(), 60_000)),
        );
        const answers = await Promise.all([
          ...others.map((c, i) => batched.commit(`none-${i}`, c.status === 'claimed' ? c.token : '', 60_000)),
          batched.commit(key, stale.token, 60_000),
          batched.commit(key, current.token, 60_000),
        ]);
        expect(answers).toEqual([...Array(6).fill(true), false, true]);
        expect(await row(key)).toMatchObject({ done: true, token: current.token, fence: 2 });
      });

      it('fails every caller of a failed batch with its error, as each would have alone', async () => {
        let fail = false;
        const failing: PgQueryable = {
          query: (config, values) =>
            fail
              ? Promise.reject(new Error('connection terminated'))
              : pool.query(config as pg.QueryConfig, values),
        };
        const batched = new PostgresStore({ pool: failing, table: TABLE, batch: true });
        fail = true;
        const answers = await Promise.allSettled(
          Array.from({ length: 10 }, () => batched.claim(randomUUID(), 60_000)),
        );
        expect(
          answers.map((a) => (a.status === 'rejected' ? (a.reason as Error).message : a.status)),
        ).toEqual(Array(10).fill('connection terminated'));
        fail = false;
        expect((await batched.claim(randomUUID(), 60_000)).status).toBe('claimed');
      });

      it('keeps the claims its INSERT granted when the SELECT after it fails: only the others fail, each alone', async () => {
        let failStates = false;
        const failing: PgQueryable = {
          query: (config, values) =>
            failStates && typeof config !== 'string' && config.text.includes('ANY(')
              ? Promise.reject(new Error('connection terminated'))
              : pool.query(config as pg.QueryConfig, values),
        };
        const batched = new PostgresStore({ pool: failing, table: TABLE, batch: true });
        const leased = randomUUID();
        await batched.claim(leased, 60_000);
        failStates = true;
        const keys = [...Array.from({ length: 4 }, () => randomUUID()), leased, randomUUID(), randomUUID()];
        const claims = await Promise.allSettled(keys.map((key) => batched.claim(key, 60_000)));
        expect(claims.map((c) => (c.status === 'fulfilled' ? c.value.status : c.reason))).toEqual([
          ...Array(4).fill('claimed'),
          'in_flight',
          'claimed',
          'claimed',
        ]);
      });

      it('grants one of 64 concurrent claims, and runs the handler once for 64 concurrent copies', async () => {
        const batched = new PostgresStore({ pool, table: TABLE, batch: true });
        const key = await expectOnceUnderConcurrency(batched);
        expect((await row(key))?.done).toBe(true);
      });
    });
  });

  describe('PostgresInbox', () => {
    let inbox: PostgresInbox<pg.PoolClient>;
    beforeEach(() => {
      inbox = new PostgresInbox({ pool, table: TABLE, ttlMs: 3_600_000 });
    });

    async function state(paymentId: string) {
      const app = await pool.query(`SELECT amount::int AS amount FROM ${APP_TABLE} WHERE payment_id = $1`, [
        paymentId,
      ]);
      return { app: app.rows.map((r) => r.amount), inbox: await row(purchaseKey(paymentId)) };
    }

    function webhookWriting(options: { fail?: () => boolean; slowMs?: number } = {}) {
      let runs = 0;
      const webhook = createWebhookHandler({
        ...base(inbox),
        handle: async (n, _context, delivery) => {
          runs++;
          const tx = inbox.client(delivery);
          await tx.query(`INSERT INTO ${APP_TABLE} (payment_id, amount) VALUES ($1, $2)`, [n.payment_id, 10]);
          if (options.slowMs) await new Promise((resolve) => setTimeout(resolve, options.slowMs));
          if (options.fail?.()) throw new Error('the shipping service is down');
        },
      });
      return { webhook, runs: () => runs };
    }

    it('commits the application write and the inbox row together; the redelivery answers duplicate', async () => {
      const paymentId = randomUUID();
      const { webhook, runs } = webhookWriting();
      const first = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(first.status).toBe(200);
      expect(first.body).toBe('{"ok":true,"outcome":"handled"}');
      expect(await state(paymentId)).toEqual({
        app: [10],
        inbox: { done: true, token: null, live: true, seconds: 3600, fence: 1 },
      });
      const again = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(again.body).toBe('{"ok":true,"outcome":"duplicate"}');
      expect(runs()).toBe(1);
    });

    it('rolls back both when the handler fails after writing, then handles the redelivery', async () => {
      const paymentId = randomUUID();
      let fail = true;
      const { webhook, runs } = webhookWriting({ fail: () => fail });
      const failed = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.body).error.code).toBe('handler.failed');
      expect(await state(paymentId)).toEqual({ app: [], inbox: undefined });
      fail = false;
      const retried = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(retried.body).toBe('{"ok":true,"outcome":"handled"}');
      expect((await state(paymentId)).app).toEqual([10]);
      expect(runs()).toBe(2);
    });

    it('64 concurrent copies: one writes, the others wait on the row and answer duplicate', async () => {
      const paymentId = randomUUID();
      const { webhook, runs } = webhookWriting({ slowMs: 50 });
      const body = signedPurchase(paymentId);
      const results = await Promise.all(
        Array.from({ length: 64 }, () => webhook(formRequest(body), undefined)),
      );
      expect(results.map((r) => r.status)).toEqual(Array(64).fill(200));
      expect(results.filter((r) => r.body === '{"ok":true,"outcome":"handled"}')).toHaveLength(1);
      expect(results.filter((r) => r.body === '{"ok":true,"outcome":"duplicate"}')).toHaveLength(63);
      expect(runs()).toBe(1);
      expect((await state(paymentId)).app).toEqual([10]);
    });

    it('answers 503 when a failed query was swallowed inside the handler, and keeps neither write', async () => {
      const paymentId = randomUUID();
      const webhook = createWebhookHandler({
        ...base(inbox),
        handle: async (n, _context, delivery) => {
          const tx = inbox.client(delivery);
          await tx.query(`INSERT INTO ${APP_TABLE} (payment_id, amount) VALUES ($1, $2)`, [n.payment_id, 10]);
          await tx.query('SELECT 1 / 0').catch(() => {});
        },
      });
      const result = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(result.status).toBe(503);
      expect(JSON.parse(result.body).error.code).toBe('store.unavailable');
      expect(await state(paymentId)).toEqual({ app: [], inbox: undefined });
    });

    it('takes over a row whose time ran out with the next fence', async () => {
      const key = randomUUID();
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at, fence) VALUES ($1, true, now() - interval '1 ms', 4)`,
        [key],
      );
      expect(await inbox.transaction(key, async () => 'ran')).toEqual({ status: 'done', value: 'ran' });
      expect(await row(key)).toEqual({ done: true, token: null, live: true, seconds: 3600, fence: 5 });
      expect(await inbox.transaction(key, async () => 'again')).toEqual({ status: 'duplicate' });
    });

    it('the claim waits lockTimeoutMs at most, and the handler queries run with the connection own lock_timeout', async () => {
      const paymentId = randomUUID();
      const seen: string[] = [];
      const webhook = createWebhookHandler({
        ...base(inbox),
        handle: async (_n, _context, delivery) => {
          const tx = inbox.client(delivery);
          seen.push((await tx.query('SHOW lock_timeout')).rows[0].lock_timeout);
          await tx.query("SET lock_timeout = '7s'"); // a session setting of the application's
          seen.push((await tx.query('SHOW lock_timeout')).rows[0].lock_timeout);
        },
      });
      expect((await webhook(formRequest(signedPurchase(paymentId)), undefined)).body).toBe(
        '{"ok":true,"outcome":"handled"}',
      );
      const settings = await pool.query("SELECT reset_val FROM pg_settings WHERE name = 'lock_timeout'");
      expect(seen).toEqual([settings.rows[0].reset_val === '0' ? '0' : seen[0], '7s']);
    });

    it('a run whose connection is killed mid-handler commits nothing; the copy waiting on its row commits once', async () => {
      const paymentId = randomUUID();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started!: (pid: number) => void;
      const firstPid = new Promise<number>((resolve) => {
        started = resolve;
      });
      let runs = 0;
      // Two instances: one process would make the second copy wait for its own run instead of the database.
      const instance = () =>
        createWebhookHandler({
          ...base(inbox),
          inFlightWaitMs: 30_000,
          handlerTimeoutMs: 30_000,
          handle: async (n, _context, delivery) => {
            const run = ++runs;
            const tx = inbox.client(delivery);
            await tx.query(`INSERT INTO ${APP_TABLE} (payment_id, amount) VALUES ($1, $2)`, [
              n.payment_id,
              run,
            ]);
            if (run === 1) {
              started((await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
              await gate;
            }
          },
        });
      const body = signedPurchase(paymentId);
      const first = instance()(formRequest(body), undefined);
      const pid = await firstPid;
      const second = instance()(formRequest(body), undefined);
      // The second copy's claim is waiting on the row the first run's transaction holds.
      while (
        (
          await pool.query(
            "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'transactionid' AND pid <> $1",
            [pid],
          )
        ).rows[0].n === 0
      ) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      await pool.query('SELECT pg_terminate_backend($1)', [pid]);
      const secondAnswer = await second;
      release();
      const firstAnswer = await first;
      expect(secondAnswer.body).toBe('{"ok":true,"outcome":"handled"}');
      expect(firstAnswer.status).toBe(503);
      expect(JSON.parse(firstAnswer.body).error.code).toBe('store.unavailable');
      expect(await state(paymentId)).toEqual({
        app: [2],
        inbox: { done: true, token: null, live: true, seconds: 3600, fence: 1 },
      });
      expect(runs).toBe(2);
    });

    describe('round trips', () => {
      /** A pool of one connection whose queries are recorded: the same client object every time. */
      async function oneConnection() {
        const single = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
        const client = await single.connect();
        const sent: string[] = [];
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        Object.assign(client, {
          query: (config: string | pg.QueryConfig, ...rest: unknown[]) => {
            sent.push(typeof config === 'string' ? config : `${config.name ?? ''} ${config.text}`);
            return query(config, ...rest);
          },
        });
        client.release();
        const one = new PostgresInbox({ pool: single, table: TABLE, ttlMs: 3_600_000 });
        return { single, sent, one };
      }

      it('sends BEGIN and the claim in one round trip, the claim prepared once per connection', async () => {
        const { single, sent, one } = await oneConnection();
        try {
          const [first, second] = [randomUUID(), randomUUID()];
          expect(await one.transaction(first, async () => 'ran', { lockTimeoutMs: 2_000 })).toEqual({
            status: 'done',
            value: 'ran',
          });
          expect(await one.transaction(second, async () => 'ran')).toEqual({ status: 'done', value: 'ran' });
          expect(await one.transaction(second, async () => 'again')).toEqual({ status: 'duplicate' });
          expect(sent).toEqual([
            expect.stringMatching(
              new RegExp(
                `^BEGIN; SELECT set_config\\('payhook.lock_timeout', current_setting\\('lock_timeout'\\), true\\); SET LOCAL lock_timeout = 100; PREPARE (payhook_[0-9a-f]{16}) \\(text, float8\\) AS INSERT [^;]+; EXECUTE \\1\\('${first}', '3600000'\\)$`,
              ),
            ),
            'COMMIT',
            expect.stringMatching(
              new RegExp(`true\\); EXECUTE payhook_[0-9a-f]{16}\\('${second}', '3600000'\\)$`),
            ),
            'COMMIT',
            expect.stringMatching(/; EXECUTE payhook_/),
            'ROLLBACK',
          ]);
        } finally {
          await single.end();
        }
      });

      it('prepares the claim again on a connection that lost it, and uses one prepared unknown to it', async () => {
        const { single, sent, one } = await oneConnection();
        try {
          await one.transaction(randomUUID(), async () => undefined);
          const prepare = /PREPARE [^;]+/.exec(sent[0]!)![0];
          await single.query('DEALLOCATE ALL'); // as DISCARD ALL or a pooler would
          const key = randomUUID();
          expect(await one.transaction(key, async () => 'ran')).toEqual({ status: 'done', value: 'ran' });
          expect(sent.slice(3, 6)).toEqual([
            expect.not.stringContaining('PREPARE'),
            'ROLLBACK',
            expect.stringContaining(`${prepare}; EXECUTE`),
          ]);
          expect(await row(key)).toMatchObject({ done: true, fence: 1 });
          // The same statement prepared on a fresh connection by someone else: EXECUTE it after one refusal.
          const other = await oneConnection();
          try {
            await other.single.query(prepare);
            expect(await other.one.transaction(randomUUID(), async () => 'ran')).toMatchObject({
              status: 'done',
            });
            expect(other.sent.slice(1, 4)).toEqual([
              expect.stringContaining(prepare),
              'ROLLBACK',
              expect.not.stringContaining('PREPARE'),
            ]);
          } finally {
            await other.single.end();
          }
        } finally {
          await single.end();
        }
      });

      it.each([
        ["a quote: o'clock"],
        ["a quote that would end the literal: x', 1); DROP TABLE users; --"],
        ["backslashes: C:\\payhook\\ and \\'"],
        ["both: \\'; SELECT 1; --"],
        ['unicode: ключ 🔑 ä\u200b'],
        ["a doubled quote and a dollar: $$ '' $1"],
      ])('stores the key %s exactly, once', async (suffix) => {
        const key = `${randomUUID()} ${suffix}`;
        expect(await inbox.transaction(key, async () => 'ran')).toEqual({ status: 'done', value: 'ran' });
        expect(await row(key)).toMatchObject({ done: true, fence: 1 });
        expect(await inbox.transaction(key, async () => 'again')).toEqual({ status: 'duplicate' });
      });

      it('refuses a key holding NUL before sending it, and rolls nothing in', async () => {
        const key = `${randomUUID()}\0'; DROP TABLE ${TABLE}; --`;
        await expect(inbox.transaction(key, async () => 'ran')).rejects.toThrow(
          '[@payhook/core] a notification key holds a NUL character.',
        );
        expect(await row(key.replace('\0', ''))).toBeUndefined();
        expect((await pool.query(`SELECT count(*)::int AS n FROM ${TABLE}`)).rows[0].n).toBeGreaterThan(0);
      });

      it('sends BEGIN and the claim in two round trips with prepare: false, the key as a bound value', async () => {
        const { single, sent } = await oneConnection();
        try {
          const plain = new PostgresInbox({ pool: single, table: TABLE, prepare: false });
          const key = `${randomUUID()} it's`;
          expect(await plain.transaction(key, async () => 'ran')).toEqual({ status: 'done', value: 'ran' });
          expect(sent).toEqual([
            expect.stringMatching(/^BEGIN; SELECT set_config/),
            expect.stringMatching(/^ INSERT /),
            'COMMIT',
          ]);
          expect(sent.join()).not.toContain(key);
        } finally {
          await single.end();
        }
      });
    });

    it('inboxClient refuses a delivery without an inbox transaction', () => {
      expect(() => inboxClient({})).toThrow(
        '[@payhook/core] this delivery has no inbox transaction: set store: new PostgresInbox({ pool }) on the webhook handler.',
      );
    });
  });

  describe('when PostgreSQL becomes unreachable', () => {
    let proxy: CuttableProxy;
    let cutPool: pg.Pool;
    beforeAll(async () => {
      const target = new URL(DATABASE_URL);
      proxy = await CuttableProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
      target.host = `127.0.0.1:${proxy.port}`;
      cutPool = createPool(target.toString());
    });
    afterAll(async () => {
      await cutPool?.end();
      await proxy?.close();
    });

    it.each([
      ['PostgresStore', () => new PostgresStore({ pool: cutPool, table: TABLE })],
      ['PostgresStore, batch: false', () => new PostgresStore({ pool: cutPool, table: TABLE, batch: false })],
      ['PostgresInbox', () => new PostgresInbox({ pool: cutPool, table: TABLE })],
    ])(
      '%s: answers 503 store.unavailable naming postgres, then handles the redelivery',
      async (_name, create) => {
        const seen: string[] = [];
        const webhook = createWebhookHandler({
          ...base(create()),
          handle: (n) => void seen.push(n.payment_id),
        });
        const before = randomUUID();
        expect((await webhook(formRequest(signedPurchase(before)), undefined)).status).toBe(200);
        proxy.cut();
        const during = randomUUID();
        const refused = await webhook(formRequest(signedPurchase(during)), undefined);
        expect(refused.status).toBe(503);
        expect(JSON.parse(refused.body).error).toEqual({
          code: 'store.unavailable',
          message:
            "[@payhook/core] the duplicate store (postgres) failed; nothing was marked processed, so the service's retry is safe.",
        });
        expect(seen).toEqual([before]);
        proxy.restore();
        expect((await webhook(formRequest(signedPurchase(during)), undefined)).body).toBe(
          '{"ok":true,"outcome":"handled"}',
        );
        expect((await webhook(formRequest(signedPurchase(before)), undefined)).body).toBe(
          '{"ok":true,"outcome":"duplicate"}',
        );
        expect(seen).toEqual([before, during]);
      },
    );
  });
});
