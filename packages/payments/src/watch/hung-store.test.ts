import { createServer, type Server, type Socket } from 'node:net';
import type { Notification } from '@payhook/core';
import { StoreError } from '@payhook/core';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ResendClient } from '../reconcile/api-client.js';
import { ApiError } from '../reconcile/api-errors.js';
import type { WatchedPayment, WatchStore } from './contract.js';
import { MemoryWatchStore } from './memory.js';
import { PostgresWatchStore } from './postgres.js';
import { RedisWatchStore } from './redis.js';
import { createPaymentWatch } from './watch.js';

const T = Date.parse('2026-11-25T09:00:00Z');
const MINUTE = 60_000;
const requested: ResendClient = { resend: async () => ({ status: 200, record: undefined }) };
const unknown: ResendClient = {
  resend: async () => {
    throw new ApiError('api.not_found', 'GET … answered 404', { status: 404 });
  },
};
/** A store whose every call never settles, counting them. */
function hungStore() {
  const calls: string[] = [];
  const never = (call: string) => () => {
    calls.push(call);
    return new Promise<never>(() => undefined);
  };
  const store: WatchStore = {
    name: 'hung',
    add: never('add'),
    take: never('take'),
    giveBack: never('giveBack'),
    remove: never('remove'),
  };
  return { store, calls };
}

/** A promise and the function that settles it. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * A memory store behind a client that queues commands while offline (node-redis by default, ioredis with
 * `maxRetriesPerRequest: null`): nothing runs until `online.open()`, then every call in the order it was made.
 */
function offlineStore(): { memory: MemoryWatchStore; online: ReturnType<typeof gate>; store: WatchStore } {
  const memory = new MemoryWatchStore();
  const online = gate();
  let line: Promise<unknown> = online.opened;
  const queued = <T>(call: () => Promise<T>): Promise<T> => {
    const done = line.then(call);
    line = done.then(undefined, () => undefined);
    return done;
  };
  const store: WatchStore = {
    name: 'offline',
    add: (p) => queued(() => memory.add(p)),
    take: (...args) => queued(() => memory.take(...args)),
    giveBack: (p) => queued(() => memory.giveBack(p)),
    remove: (o, op) => queued(() => memory.remove(o, op)),
  };
  return { memory, online, store };
}
const ticks = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('a watch over a store that stopped answering', () => {
  it('ends a run after storeTimeoutMs with a StoreError naming the store; a run joined to it ends too, the next one takes again', async () => {
    const { store, calls } = hungStore();
    const watch = createPaymentWatch({ api: requested, store, storeTimeoutMs: 20, logger: false });
    const first = watch.reconcileOverdue();
    const joined = watch.reconcileOverdue();
    expect(joined).toBe(first);
    const error = await first.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'store.unavailable', status: 503 });
    expect((error as Error).message).toBe(
      // A StoreError: core's class, whose messages start with core's name.
      "[@payhook/payments] the payment watch's store (hung) did not answer within 20 ms (storeTimeoutMs) when taking the overdue payments; the run asked the service nothing (a take that lands later gives its tries back).",
    );
    await expect(joined).rejects.toBe(error);
    await expect(watch.reconcileOverdue()).rejects.toThrow(/store \(hung\) did not answer within 20 ms/);
    expect(calls).toEqual(['take', 'take']);
  });

  it('bounds register, forget and settle too', async () => {
    const { store } = hungStore();
    const watch = createPaymentWatch({ api: requested, store, storeTimeoutMs: 20, logger: false });
    await expect(watch.register({ orderId: 'o' })).rejects.toThrow(/when registering a payment/);
    await expect(watch.forget('o')).rejects.toThrow(/when dropping a payment/);
    const final = { order_id: 'o', method: 'purchase', status: 'success' } as unknown as Notification;
    await expect(watch.settle(final)).rejects.toBeInstanceOf(StoreError);
  });

  it('gives back the tries of a take that lands after its timeout: nobody asked the service about them', async () => {
    const memory = new MemoryWatchStore();
    const late = gate();
    const store: WatchStore = {
      name: 'slow',
      add: (p) => memory.add(p),
      take: async (...args) => {
        await late.opened;
        return memory.take(...args);
      },
      giveBack: (p) => memory.giveBack(p),
      remove: (o, op) => memory.remove(o, op),
    };
    let now = T;
    const watch = createPaymentWatch({ api: requested, store, now: () => now, storeTimeoutMs: 20 });
    await watch.register({ orderId: 'o' });
    now += 15 * MINUTE;
    await expect(watch.reconcileOverdue()).rejects.toThrow(/did not answer within 20 ms/);
    late.open();
    await ticks();
    const taken: WatchedPayment[] = await memory.take(now + 15 * MINUTE, now + 30 * MINUTE, 10);
    expect(taken.map((p) => [p.orderId, p.tries])).toEqual([['o', 1]]);
  });

  it('gives back every try of takes that piled up while the store was offline, then landed in order', async () => {
    // A client queueing commands offline (node-redis by default, ioredis with maxRetriesPerRequest: null) runs
    // every take the runs sent once the server is back, in order, then their late gives back.
    const { memory, online, store } = offlineStore();
    let now = T;
    const overdue: string[] = [];
    const watch = createPaymentWatch({
      api: requested,
      store,
      now: () => now,
      storeTimeoutMs: 20,
      logger: false,
      onOverdue: (p) => overdue.push(`${p.orderId} ${p.reason} ${p.tries}`),
    });
    await memory.add({
      orderId: 'o',
      operation: 'purchase',
      createdAt: T,
      deadline: T + 15 * MINUTE,
      tries: 0,
    });
    for (let run = 0; run < 4; run++) {
      now += 15 * MINUTE;
      await expect(watch.reconcileOverdue()).rejects.toThrow(/did not answer within 20 ms/);
    }
    online.open();
    await ticks();
    now += 15 * MINUTE;
    const report = await watch.reconcileOverdue();
    expect(report.watching.map((p) => [p.orderId, p.tries])).toEqual([['o', 1]]);
    expect(overdue).toEqual([]);
  });

  it('keeps the outage clock of a payment through takes that piled up while the store was offline', async () => {
    const { memory, online, store } = offlineStore();
    const down: ResendClient = {
      resend: async () => {
        throw new ApiError('api.network', 'GET … failed: ECONNREFUSED');
      },
    };
    let now = T;
    const overdue: string[] = [];
    const watch = createPaymentWatch({
      api: down,
      store,
      now: () => now,
      storeTimeoutMs: 20,
      logger: false,
      onOverdue: (p) => overdue.push(`${p.orderId} ${p.reason}`),
    });
    const entry = { orderId: 'o', operation: 'purchase', createdAt: T, deadline: T, tries: 0 };
    await memory.add(entry);
    // Every run failed to reach the service since 23 h 30 min ago.
    await memory.giveBack([{ ...entry, unreachableSince: T - 23.5 * 60 * MINUTE }]);
    for (let run = 0; run < 4; run++) {
      now += 15 * MINUTE;
      await expect(watch.reconcileOverdue()).rejects.toThrow(/did not answer within 20 ms/);
    }
    online.open();
    await ticks();
    now += 15 * MINUTE;
    await watch.reconcileOverdue();
    expect(overdue).toEqual(['o api_unreachable']);
  });

  it('bounds a re-send of a custom ResendClient that never settles: api.timeout, no try counted', async () => {
    const memory = new MemoryWatchStore();
    const outages: string[] = [];
    const never: ResendClient = { resend: () => new Promise(() => undefined) };
    const watch = createPaymentWatch({
      api: never,
      store: memory,
      now: () => T + 20 * MINUTE,
      resendTimeoutMs: 50,
      logger: false,
      onUnreachable: (o) => outages.push((o.error as ApiError).code),
    });
    await memory.add({ orderId: 'o', operation: 'purchase', createdAt: T, deadline: T, tries: 0 });
    const report = await watch.reconcileOverdue();
    expect(report.watching.map((p) => [p.orderId, p.tries])).toEqual([['o', 0]]);
    expect(outages).toEqual(['api.timeout']);
  }, 5_000);

  it('takes back a registration that landed after its timeout: the create was never sent', async () => {
    const memory = new MemoryWatchStore();
    const late = gate();
    const store: WatchStore = {
      name: 'slow',
      add: async (p) => {
        await late.opened;
        return memory.add(p);
      },
      take: (...args) => memory.take(...args),
      giveBack: (p) => memory.giveBack(p),
      remove: (o, op) => memory.remove(o, op),
    };
    const watch = createPaymentWatch({ api: unknown, store, storeTimeoutMs: 20, logger: false });
    await expect(watch.register({ orderId: 'o' })).rejects.toThrow(/when registering a payment/);
    late.open();
    await ticks();
    expect(memory.size).toBe(0);
  });

  it('reports a payment whose remove landed after its timeout', async () => {
    const memory = new MemoryWatchStore();
    const late = gate();
    const store: WatchStore = {
      name: 'slow',
      add: (p) => memory.add(p),
      take: (...args) => memory.take(...args),
      giveBack: (p) => memory.giveBack(p),
      remove: async (o, op) => {
        await late.opened;
        return memory.remove(o, op);
      },
    };
    const reported: string[] = [];
    let now = T;
    const watch = createPaymentWatch({
      api: unknown,
      store,
      now: () => now,
      storeTimeoutMs: 20,
      logger: false,
      onOverdue: (p) => reported.push(`${p.orderId} ${p.reason}`),
    });
    await watch.register({ orderId: 'o' });
    now += 15 * MINUTE;
    await expect(watch.reconcileOverdue()).rejects.toThrow(/when dropping a payment/);
    expect(reported).toEqual([]);
    late.open();
    await ticks();
    expect(reported).toEqual(['o unknown_order']);
    expect(memory.size).toBe(0);
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server that accepts connections and never says a word (a PostgreSQL server that stopped answering). */
async function silentServer(): Promise<{ port: number; server: Server; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server, sockets };
}

describe('a watch over a real client whose server is gone', () => {
  it('RedisWatchStore, its client queueing commands offline: the run and register fail after storeTimeoutMs', async () => {
    const client = new Redis({ host: '127.0.0.1', port: await closedPort(), maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    try {
      const store = new RedisWatchStore({ client });
      const watch = createPaymentWatch({ api: requested, store, storeTimeoutMs: 100, logger: false });
      await expect(watch.register({ orderId: 'o' })).rejects.toThrow(
        "the payment watch's store (redis) did not answer within 100 ms (storeTimeoutMs) when registering",
      );
      await expect(watch.reconcileOverdue()).rejects.toThrow(/store \(redis\) did not answer within 100 ms/);
    } finally {
      client.disconnect();
    }
  });

  it('PostgresWatchStore, its pool without a connection timeout: the run fails after storeTimeoutMs', async () => {
    const { port, server, sockets } = await silentServer();
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    pool.on('error', () => undefined);
    try {
      const store = new PostgresWatchStore({ pool });
      const watch = createPaymentWatch({ api: requested, store, storeTimeoutMs: 100, logger: false });
      await expect(watch.reconcileOverdue()).rejects.toThrow(
        /store \(postgres\) did not answer within 100 ms \(storeTimeoutMs\) when taking/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    }
  });
});
