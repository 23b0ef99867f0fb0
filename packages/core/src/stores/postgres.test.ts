import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  expectOnceUnderConcurrency,
  formRequest,
  purchaseKey,
  STORE_SECRET,
  signedPurchase,
} from '../../test/deliveries.js';
import { CuttableProxy, DATABASE_URL, reachPostgres } from '../../test/servers.js';
import { createWebhookHandler } from '../handler.js';
import { inboxClient, migrate, migrationSql, PostgresInbox, PostgresStore } from './postgres.js';

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
              round(extract(epoch FROM expires_at - now()))::int AS seconds
       FROM ${TABLE} WHERE key = $1`,
      [key],
    );
    return result.rows[0] as
      | { done: boolean; token: string | null; live: boolean; seconds: number }
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

  describe('PostgresStore', () => {
    it('claims a new key with a token, answers in_flight while leased, duplicate once committed', async () => {
      const key = randomUUID();
      const claim = await store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      expect(claim.token).toMatch(/^[0-9a-f]{32}$/);
      expect(await row(key)).toEqual({ done: false, token: claim.token, live: true, seconds: 60 });
      expect(await store.claim(key, 60_000)).toEqual({ status: 'in_flight' });
      await store.commit(key, claim.token, 3_600_000);
      expect(await row(key)).toEqual({ done: true, token: null, live: true, seconds: 3600 });
      expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
    });

    it('release deletes only the caller own lease', async () => {
      const key = randomUUID();
      const late = await store.claim(key, 60_000);
      if (late.status !== 'claimed') throw new Error('expected a claim');
      await pool.query(`UPDATE ${TABLE} SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
      const current = await store.claim(key, 60_000);
      if (current.status !== 'claimed') throw new Error('expected the expired lease to be taken over');
      await store.release(key, late.token);
      expect((await row(key))?.token).toBe(current.token);
      await store.release(key, current.token);
      expect(await row(key)).toBeUndefined();
    });

    it('release after commit keeps the done row; commit after expiry still marks done', async () => {
      const key = randomUUID();
      const claim = await store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await pool.query(`DELETE FROM ${TABLE} WHERE key = $1`, [key]); // expired and pruned meanwhile
      await store.commit(key, claim.token, 60_000);
      await store.release(key, claim.token);
      expect(await row(key)).toEqual({ done: true, token: null, live: true, seconds: 60 });
    });

    it('claims a key whose done row has expired (TTL on read)', async () => {
      const key = randomUUID();
      await pool.query(
        `INSERT INTO ${TABLE} (key, done, expires_at) VALUES ($1, true, now() - interval '1 ms')`,
        [key],
      );
      expect((await store.claim(key, 60_000)).status).toBe('claimed');
    });

    it('grants one of 64 concurrent claims, and runs the handler once for 64 concurrent copies', async () => {
      const key = await expectOnceUnderConcurrency(store);
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
        secret: STORE_SECRET,
        store: inbox,
        logger: false,
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
        inbox: { done: true, token: null, live: true, seconds: 3600 },
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
        secret: STORE_SECRET,
        store: inbox,
        logger: false,
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
      ['PostgresInbox', () => new PostgresInbox({ pool: cutPool, table: TABLE })],
    ])(
      '%s: answers 503 store.unavailable naming postgres, then handles the redelivery',
      async (_name, create) => {
        const seen: string[] = [];
        const webhook = createWebhookHandler({
          secret: STORE_SECRET,
          store: create(),
          logger: false,
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
