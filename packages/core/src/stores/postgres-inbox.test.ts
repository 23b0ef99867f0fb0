import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signedPurchase } from '../../test/bodies.js';
import { base, deferred, formRequest, HANDLED } from '../../test/deliveries.js';
import { CuttableProxy, DATABASE_URL, reachPostgres } from '../../test/servers.js';
import { createWebhookHandler } from '../handler.js';
import type { TransactionalStore } from './contract.js';
import { migrate, PostgresInbox, PostgresStore } from './postgres.js';

// The bounds of a claim: a frozen database is answered within storeTimeoutMs; only a concurrent copy's row, which
// the database says is held, may be waited for up to inFlightWaitMs.

const postgresUp = await reachPostgres();
const TABLE = `payhook_test_bounds_${process.pid}`;
const TIMING = { storeTimeoutMs: 200, inFlightWaitMs: 5_000 };

describe.skipIf(!postgresUp)('the bounds of a PostgreSQL claim', () => {
  let pool: pg.Pool;
  let proxy: CuttableProxy;
  let frozen: pg.Pool;
  let stalled = false;
  /** Forwards again, once per stall: a second resume would pipe each connection twice. */
  const thaw = () => {
    if (stalled) proxy.resume();
    stalled = false;
  };

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await migrate(pool, { table: TABLE });
    const target = new URL(DATABASE_URL);
    proxy = await CuttableProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    frozen = new pg.Pool({ connectionString: target.toString(), max: 1 });
    frozen.on('error', () => {});
  });

  afterAll(async () => {
    vi.useRealTimers();
    if (proxy) thaw();
    await frozen?.end();
    await proxy?.close();
    await pool?.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await pool?.end();
  });

  afterEach(() => {
    vi.useRealTimers();
    thaw();
  });

  it.each([
    ['PostgresInbox', () => new PostgresInbox({ pool: frozen, table: TABLE })],
    ['PostgresStore', () => new PostgresStore({ pool: frozen, table: TABLE })],
  ])(
    '%s: a frozen database is answered 503 store.unavailable at storeTimeoutMs on the handler clock, not after inFlightWaitMs too',
    async (_name, create) => {
      const webhook = createWebhookHandler({ ...base(create()), ...TIMING, handle: () => {} });
      await frozen.query('SELECT 1'); // one connection, idle in the pool: the claim needs no new one
      proxy.stall();
      stalled = true;
      // Only the handler's timers are faked: the sockets and the pool run on the real event loop.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      let answered = false;
      const body = signedPurchase();
      const answer = webhook(formRequest(body), undefined).finally(() => {
        answered = true;
      });
      // The claim has borrowed the connection: its bound is running on the fake clock.
      while (frozen.idleCount > 0) await new Promise((resolve) => setImmediate(resolve));
      await vi.advanceTimersByTimeAsync(TIMING.storeTimeoutMs - 1);
      expect(answered).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(answered).toBe(true);
      const result = await answer;
      expect(result.status).toBe(503);
      expect(JSON.parse(result.body).error).toEqual({
        code: 'store.unavailable',
        message:
          "[@payhook/core] the duplicate store (postgres) did not answer within 200 ms (storeTimeoutMs); nothing was marked processed, so the service's retry is safe.",
      });
      vi.useRealTimers();
      thaw();
      // The claim that reached the database late is rolled back or released: the redelivery is handled.
      let again = await webhook(formRequest(body), undefined);
      for (let i = 0; i < 50 && again.status !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        again = await webhook(formRequest(body), undefined);
      }
      expect(again.body).toBe(HANDLED);
    },
  );

  it("PostgresInbox: the wait for a busy pool's connection counts against storeTimeoutMs, not handlerTimeoutMs", async () => {
    const busy = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const held = await busy.connect();
    try {
      const webhook = createWebhookHandler({
        ...base(new PostgresInbox({ pool: busy, table: TABLE })),
        storeTimeoutMs: 2_000,
        handlerTimeoutMs: 1_000,
        handle: () => {},
      });
      // Only the handler's clocks are faked: the sockets and the pool run on the real event loop.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      const answer = webhook(formRequest(signedPurchase()), undefined);
      while (busy.waitingCount === 0) await new Promise((resolve) => setImmediate(resolve));
      // Past handlerTimeoutMs, within storeTimeoutMs, the transaction still waiting for the pool's one connection.
      await vi.advanceTimersByTimeAsync(1_500);
      held.release();
      expect((await answer).body).toBe(HANDLED);
    } finally {
      vi.useRealTimers();
      await busy.end();
    }
  });

  it('PostgresInbox: a concurrent copy whose row is held waits past storeTimeoutMs, up to inFlightWaitMs, then answers 409', async () => {
    const paymentId = randomUUID();
    const latch = deferred();
    const inside = deferred();
    const inbox = new PostgresInbox({ pool, table: TABLE });
    const waits: string[] = [];
    // The copy's store, telling when the inbox says it waits on the first copy's row.
    const watched: TransactionalStore = {
      name: inbox.name,
      transaction: (key, work, options) =>
        inbox.transaction(key, work, {
          ...options,
          onWaiting: () => {
            waits.push(key);
            options?.onWaiting?.();
          },
        }),
    };
    const options = { ...TIMING, inFlightWaitMs: 1_000 };
    const first = createWebhookHandler({
      ...base(inbox),
      ...options,
      handle: async () => {
        inside.resolve();
        await latch.promise;
      },
    });
    // A second instance: one process would make the copy wait for its own run instead of the database.
    const second = createWebhookHandler({ ...base(watched), ...options, handle: () => {} });
    const body = signedPurchase(paymentId);
    const running = first(formRequest(body), undefined);
    await inside.promise;
    const copy = await second(formRequest(body), undefined);
    expect(copy.status).toBe(409);
    expect(JSON.parse(copy.body).error.code).toBe('notification.in_flight');
    expect(waits).toHaveLength(1);
    latch.resolve();
    expect((await running).body).toBe(HANDLED);
    expect((await second(formRequest(body), undefined)).body).toBe('{"ok":true,"outcome":"duplicate"}');
  });
});
