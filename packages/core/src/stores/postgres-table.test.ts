import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signedPurchase } from '../../test/bodies.js';
import { base, deferred, formRequest, HANDLED } from '../../test/deliveries.js';
import { DATABASE_URL, reachPostgres } from '../../test/servers.js';
import { createWebhookHandler } from '../handler.js';
import { migrate, type PgQueryable, PostgresInbox } from './postgres.js';

// migrate() at a second instance's start while the first handles deliveries in inbox transactions.

const postgresUp = await reachPostgres();
const TABLE = `payhook_test_migrate_${process.pid}`;
const INDEX = `${TABLE}_expires_at_idx`;

function createPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 12 });
  pool.on('error', () => {});
  return pool;
}

/** A client that records the migration attempts it sends (the DDL, under the advisory lock) and how each ended. */
function recording(pool: pg.Pool) {
  const attempts: string[] = [];
  let onRefused = () => {};
  const client: PgQueryable = {
    query: (text: string | pg.QueryConfig, values?: unknown[]) => {
      const sent = pool.query(text as string, values);
      if (typeof text !== 'string' || !text.includes('pg_advisory_xact_lock')) return sent;
      return sent.then(
        (result) => {
          attempts.push('applied');
          return result;
        },
        (error: { code?: string }) => {
          attempts.push(error.code ?? 'failed');
          onRefused();
          throw error;
        },
      );
    },
  };
  const whenRefused = (listener: () => void) => {
    onRefused = listener;
  };
  return { client, attempts, whenRefused };
}

describe.skipIf(!postgresUp)('migrate while an inbox handler holds its transaction', () => {
  let pool: pg.Pool;
  /** The second instance's own pool, as a deploy starts it. */
  let other: pg.Pool;
  let latch: ReturnType<typeof deferred>;
  let running: Promise<{ status: number; body: string }>;
  let webhook: ReturnType<typeof createWebhookHandler<undefined>>;

  beforeAll(async () => {
    pool = createPool();
    other = createPool();
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await migrate(pool, { table: TABLE });
  });

  afterAll(async () => {
    await pool?.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await pool?.end();
    await other?.end();
  });

  /**
   * Starts a delivery whose handler waits on `latch` inside its transaction (holding the table's lock), after
   * `before` (DDL of the test's own, which would wait for that transaction).
   */
  async function handlerRunning(before?: string) {
    if (before !== undefined) await pool.query(before);
    latch = deferred();
    const inside = deferred();
    const held = randomUUID();
    const inbox = new PostgresInbox<pg.PoolClient>({ pool, table: TABLE });
    webhook = createWebhookHandler({
      ...base(inbox),
      inFlightWaitMs: 1_000,
      handle: async (n, _context, delivery) => {
        await inbox.client(delivery).query('SELECT 1');
        if (n.payment_id !== held) return;
        inside.resolve();
        await latch.promise;
      },
    });
    running = webhook(formRequest(signedPurchase(held)), undefined);
    await inside.promise;
  }

  afterEach(async () => {
    latch.resolve();
    expect((await running).body).toBe(HANDLED);
  });

  const indexes = async () =>
    (await pool.query('SELECT indexname FROM pg_indexes WHERE indexname = $1', [INDEX])).rows.length;

  it('takes no lock when nothing is missing: it returns while the handler runs, and 10 new deliveries meanwhile are handled', async () => {
    await handlerRunning();
    let migrated = false;
    const migrating = migrate(other, { table: TABLE }).then(() => {
      migrated = true;
    });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => webhook(formRequest(signedPurchase()), undefined)),
    );
    expect(answers.map((a) => [a.status, a.body])).toEqual(Array(10).fill([200, HANDLED]));
    await migrating;
    // Settled before the latch: the running handler's transaction never held it up.
    expect(migrated).toBe(true);
  });

  it('a needed change waits for the handler under its lock_timeout; a claim meanwhile answers 503 store.unavailable with Retry-After', async () => {
    await handlerRunning(`DROP INDEX ${INDEX}`);
    const { client, attempts } = recording(other);
    const migrating = migrate(client, { table: TABLE, lockTimeoutMs: 30_000, attempts: 1 });
    // The CREATE INDEX waits for the running handler's transaction, and holds every new claim behind it.
    while (
      (
        await pool.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = to_regclass($1)`,
          [TABLE],
        )
      ).rows[0].n === 0
    ) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const refused = await webhook(formRequest(signedPurchase()), undefined);
    expect(refused.status).toBe(503);
    expect(refused.headers).toMatchObject({ 'retry-after': '1' });
    expect(JSON.parse(refused.body).error).toEqual({
      code: 'store.unavailable',
      message:
        "[@payhook/core] the duplicate store (postgres) failed; nothing was marked processed, so the service's retry is safe.",
    });
    latch.resolve();
    await migrating;
    expect(attempts).toEqual(['applied']);
    expect(await indexes()).toBe(1);
  });

  it('tries a needed change again after lock_timeout, and lands it once the handler has ended', async () => {
    await handlerRunning(`DROP INDEX ${INDEX}`);
    const { client, attempts, whenRefused } = recording(other);
    whenRefused(() => latch.resolve());
    await migrate(client, { table: TABLE, lockTimeoutMs: 50, attempts: 3 });
    expect(attempts).toEqual(['55P03', 'applied']);
    expect(await indexes()).toBe(1);
  });

  it('throws naming what is missing after attempts tries, and changes nothing', async () => {
    await handlerRunning(`DROP INDEX ${INDEX}`);
    const { client, attempts } = recording(other);
    await expect(migrate(client, { table: TABLE, lockTimeoutMs: 20, attempts: 3 })).rejects.toThrow(
      `[@payhook/core] migrate could not add the expiry index to the inbox table "${TABLE}": its lock was not granted within 20 ms (lockTimeoutMs) in 3 attempts, as open transactions hold the table (deliveries in progress, or another session's). Nothing was changed; run migrate again once they end, or raise lockTimeoutMs.`,
    );
    expect(attempts).toEqual(['55P03', '55P03', '55P03']);
    expect(await indexes()).toBe(0);
    latch.resolve();
    await migrate(other, { table: TABLE });
    expect(await indexes()).toBe(1);
  });
});
