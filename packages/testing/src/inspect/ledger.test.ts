import type { LedgerFact } from '@payhook/payments';
import { migrateLedger, PostgresLedgerStore } from '@payhook/payments/postgres';
import { RedisLedgerStore } from '@payhook/payments/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, reachPostgres, reachRedis } from '../../../core/test/servers.js';
import { openLedger, readLedger, readOnlyPool } from './ledger.js';

const redisUp = await reachRedis();
const postgresUp = await reachPostgres();
const suffix = `${process.pid}_${Date.now() % 100_000}`;
const table = `payhook_inspect_ledger_${suffix}`;
const prefix = `payhook-test:inspect-ledger:${suffix}:`;

/** A purchase of 12.50 UAH, then a partial refund of 5.00: the payment is partially refunded. */
const FACTS: LedgerFact[] = [
  {
    k: 'pos:o-1:purchase:success',
    m: 'purchase',
    s: 'success',
    d: 'p',
    a: 1250,
    c: 'UAH',
    at: 1_764_410_000_000,
  },
  {
    k: 'pos:o-1:refund:r-1',
    m: 'refund',
    s: 'success',
    d: 's',
    a: 500,
    c: 'UAH',
    o: 'r-1',
    at: 1_764_410_060_000,
  },
];

let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  if (redisUp) {
    redis = new Redis(REDIS_URL);
    const store = new RedisLedgerStore({ client: redis, prefix });
    for (const fact of FACTS) await store.append('o-1', fact);
  }
  if (postgresUp) {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    await migrateLedger(pool, { table });
    const store = new PostgresLedgerStore({ pool, table });
    for (const fact of FACTS) await store.append('o-1', fact);
  }
});
afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  await pool?.query(`DROP TABLE IF EXISTS ${table}`);
  await pool?.end();
});

const PARTIALLY_REFUNDED = {
  entry: expect.objectContaining({
    orderId: 'o-1',
    state: 'partially_refunded',
    version: 2,
    paidAmount: 12.5,
    refundedAmount: 5,
    refunds: { 'r-1': 5 },
    history: [
      expect.objectContaining({ from: 'new', to: 'paid', version: 1 }),
      expect.objectContaining({ from: 'paid', to: 'partially_refunded', version: 2 }),
    ],
    deliveries: [
      expect.objectContaining({ method: 'purchase', verdict: 'moved' }),
      expect.objectContaining({ method: 'refund', operationId: 'r-1', verdict: 'moved' }),
    ],
  }),
};

describe.skipIf(!postgresUp)('the inspector reads a PostgresLedgerStore by its URL', () => {
  it("shows a payment's state, amounts, history and deliveries; an order never recorded as missing", async () => {
    const reader = await openLedger({ url: DATABASE_URL, table });
    try {
      expect(await readLedger(reader, 'o-1')).toEqual(PARTIALLY_REFUNDED);
      expect(await readLedger(reader, 'o-unknown')).toEqual({ missing: true });
    } finally {
      await reader.close();
    }
  });

  it('reads in read-only sessions: the database refuses a write on them', async () => {
    const readOnly = await readOnlyPool(DATABASE_URL);
    try {
      await expect(readOnly.query(`DELETE FROM ${table}`)).rejects.toMatchObject({ code: '25006' });
      expect((await pool!.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(1);
    } finally {
      await readOnly.end();
    }
  });

  it('names a missing table, and never the URL or its password when the server is unreachable', async () => {
    const reader = await openLedger({ url: DATABASE_URL, table: `${table}_missing` });
    const gone = await openLedger({ url: 'postgres://reader:hunter2-secret@127.0.0.1:1/shop' });
    try {
      const missing = await readLedger(reader, 'o-1');
      expect(missing).toEqual({ error: expect.stringContaining("the ledger's table does not exist") });
      const unreachable = await readLedger(gone, 'o-1');
      expect(unreachable).toEqual({ error: expect.stringMatching(/ECONNREFUSED|no answer/) });
      expect(JSON.stringify(unreachable)).not.toContain('hunter2');
    } finally {
      await reader.close();
      await gone.close();
    }
  });
});

describe.skipIf(!redisUp)('the inspector reads a RedisLedgerStore by its URL', () => {
  it("shows a payment's state, amounts, history and deliveries, with the store's prefix", async () => {
    const reader = await openLedger({ url: REDIS_URL, prefix });
    try {
      expect(await readLedger(reader, 'o-1')).toEqual(PARTIALLY_REFUNDED);
      expect(await readLedger(reader, 'o-unknown')).toEqual({ missing: true });
    } finally {
      await reader.close();
    }
  });

  it('answers an unreachable Redis within its bound, naming neither the URL nor its password', async () => {
    const gone = await openLedger({ url: 'redis://:hunter2-secret@127.0.0.1:1' });
    try {
      const view = await readLedger(gone, 'o-1');
      expect(view).toEqual({ error: expect.any(String) });
      expect(JSON.stringify(view)).not.toContain('hunter2');
    } finally {
      await gone.close();
    }
  });
});

describe('the inspector with a ledger of its own', () => {
  it('takes any object with get, and refuses a URL of another kind', async () => {
    const reader = await openLedger({ get: async () => undefined });
    expect(await readLedger(reader, 'o-1')).toEqual({ missing: true });
    await expect(openLedger({ url: 'mysql://127.0.0.1/shop' })).rejects.toThrow(
      "[@payhook/testing] the ledger's URL must start with redis://, rediss://, postgres:// or postgresql://, not mysql://.",
    );
  });
});
