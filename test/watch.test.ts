import { createServer, type IncomingMessage } from 'node:http';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import {
  type ApiError,
  createApiClient,
  createPaymentWatch,
  MemoryWatchStore,
  type OverduePayment,
  type WatchOutage,
  type WatchStore,
} from '@payhook/payments';
import { TEST_CARDS, THREE_DS_CODE } from '@payhook/testing/fake';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../packages/core/src/stores/memory.ts';
import { migrate, PostgresStore } from '../packages/core/src/stores/postgres.ts';
import { RedisStore } from '../packages/core/src/stores/redis.ts';
import { DATABASE_URL, REDIS_URL, reachPostgres, reachRedis } from '../packages/core/test/servers.ts';
import { migrateWatch, PostgresWatchStore } from '../packages/payments/src/watch/postgres.ts';
import { RedisWatchStore } from '../packages/payments/src/watch/redis.ts';
import { CUSTOMER } from '../packages/payments/test/payment-requests.ts';
import { apiOf, startFakeApi } from './support/fake-api.js';
import { closing, listen } from './support/listen.js';

const SECRET = 'watch-secret-5c1e9a';
const NOW = '2026-11-25T09:00:00Z';
const MINUTE = 60_000;
const HANDLED = '{"ok":true,"outcome":"handled"}';
const DUPLICATE = '{"ok":true,"outcome":"duplicate"}';
const CVV = '9071';

const redisUp = await reachRedis();
const postgresUp = await reachPostgres();
const suffix = `${process.pid}_${Date.now() % 100_000}`;
const table = `payhook_watchtest_${suffix}`;
const watchTable = `payhook_watchtest_w_${suffix}`;
const prefix = `payhook-test:watch:${suffix}:`;
let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  if (redisUp) redis = new Redis(REDIS_URL);
  if (postgresUp) {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
    await migrate(pool, { table });
    await migrateWatch(pool, { table: watchTable });
  }
});
afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  await pool?.query(`DROP TABLE IF EXISTS ${table}, ${watchTable}`);
  await pool?.end();
});

/** Each store kind: the webhook's duplicate store and the watch's store on the same server. */
const KINDS = [
  { name: 'memory', up: true, make: () => ({ dedupe: new MemoryStore(), watch: new MemoryWatchStore() }) },
  {
    name: 'Redis',
    up: redisUp,
    make: (n: number) => ({
      dedupe: new RedisStore({ client: redis!, prefix: `${prefix}${n}:` }),
      watch: new RedisWatchStore({ client: redis!, prefix: `${prefix}${n}:` }),
    }),
  },
  {
    name: 'PostgreSQL',
    up: postgresUp,
    make: () => ({
      dedupe: new PostgresStore({ pool: pool!, table }),
      watch: new PostgresWatchStore({ pool: pool!, table: watchTable }),
    }),
  },
];

// A seed per test: the Redis and PostgreSQL stores outlive a test, and the same ids would be duplicates.
let nextSeed = 61;

/** The fake behind real HTTP, a merchant counting handler runs per order, the watch and a client given it. */
async function shop(stores: { dedupe: MemoryStore | RedisStore | PostgresStore; watch: WatchStore }) {
  const service = await startFakeApi('server', { secret: SECRET, now: NOW, seed: nextSeed++ });
  closing.push(service.close);
  const { fake, paths } = service;
  const api = apiOf(service, SECRET);
  const runs = new Map<string, number>();
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: SECRET,
    store: stores.dedupe,
    logger: false,
  });
  webhook.onAny(function fulfil(n: Notification) {
    const key = `${n.order_id} ${n.status}`;
    runs.set(key, (runs.get(key) ?? 0) + 1);
  });
  const logged: string[] = [];
  const overdue: OverduePayment[] = [];
  let now = Date.parse(NOW);
  const watch = createPaymentWatch({
    api,
    webhook,
    store: stores.watch,
    now: () => now,
    requestsPerSecond: 1000,
    onOverdue: (p) => overdue.push(p),
    logger: { warn: (line: string) => logged.push(line) },
  });
  webhook.onAny(watch.settle);
  const serverUrl = `${await listen(createServer(createNodeListener(webhook)))}/webhooks`;
  const client = createApiClient({ ...api, watch });
  const pay = (orderId: string, card: string = TEST_CARDS.success) =>
    client.createPayment({
      mode: 'direct',
      method: 'purchase',
      amount: 12.5,
      currency: 'XTS',
      order_id: orderId,
      server_url: serverUrl,
      order_3ds_bypass: 'supported',
      cc_number: card,
      exp_month: 12,
      exp_year: 2031,
      card_cvv: CVV,
      ...CUSTOMER,
    });
  const advance = (ms: number) => {
    now += ms;
  };
  return { fake, api, paths, runs, watch, pay, advance, logged, overdue, webhook, now: () => now };
}

type Shop = Awaited<ReturnType<typeof shop>>;

/** Nothing any report, log line or error holds may be a credential, a signature, a card field or the customer's email. */
function expectNoSecrets(s: Shop, ...more: unknown[]) {
  const text = JSON.stringify([s.logged, s.overdue, more], (_k, v) =>
    v instanceof Error ? { message: v.message, code: (v as ApiError).code } : v,
  );
  const signatures = s.fake.deliveries.map((d) => d.signature);
  for (const secret of [
    SECRET,
    s.api.apiKey,
    s.api.endpointsKey,
    TEST_CARDS.success,
    TEST_CARDS.threeDs,
    CVV,
    'ada@example.com',
  ]) {
    expect(text).not.toContain(secret);
  }
  for (const signature of signatures) expect(text).not.toContain(signature);
  expect(text).not.toMatch(/cc_number|card_cvv|cc_token|signature/i);
}

describe.each(KINDS)('the payment watch on $name', (kind) => {
  it.skipIf(!kind.up)(
    'settles 10 payments once each: 6 by their webhook, 4 held back by the fake in one run; the originals released later answer duplicate',
    async () => {
      const s = await shop(kind.make(nextSeed));
      for (let i = 0; i < 6; i++) await s.pay(`paid-${i}`);
      await s.fake.idle();
      s.fake.outbox.pause();
      for (let i = 0; i < 4; i++) await s.pay(`held-${i}`);
      await s.fake.idle();
      expect(s.fake.deliveries.map((d) => d.body)).toEqual(Array(6).fill(HANDLED));

      // Not yet overdue: a run takes nothing and asks the service nothing.
      const before = s.paths.length;
      expect(await s.watch.reconcileOverdue()).toEqual({ settled: [], watching: [], overdue: [] });
      expect(s.paths).toHaveLength(before);

      s.advance(16 * MINUTE);
      const report = await s.watch.reconcileOverdue();
      expect(report.settled.map((p) => [p.orderId, p.operation, p.tries]).sort()).toEqual([
        ['held-0', 'purchase', 1],
        ['held-1', 'purchase', 1],
        ['held-2', 'purchase', 1],
        ['held-3', 'purchase', 1],
      ]);
      expect([report.watching, report.overdue]).toEqual([[], []]);
      expect(s.paths.filter((p) => p.includes('/orders/'))).toHaveLength(4);
      const orders = [...Array(6).keys()]
        .map((i) => `paid-${i}`)
        .concat([0, 1, 2, 3].map((i) => `held-${i}`));
      expect(Object.fromEntries(s.runs)).toEqual(Object.fromEntries(orders.map((o) => [`${o} success`, 1])));

      // The originals held back, and the webhooks the re-sends asked for, arrive at last: duplicates.
      await s.fake.outbox.resume();
      await s.fake.idle();
      const late = s.fake.deliveries.slice(6);
      expect(late).toHaveLength(8);
      expect(late.map((d) => d.body)).toEqual(Array(8).fill(DUPLICATE));
      expect([...s.runs.values()]).toEqual(Array(10).fill(1));

      // Nothing is left to watch.
      s.advance(60 * MINUTE);
      expect(await s.watch.reconcileOverdue()).toEqual({ settled: [], watching: [], overdue: [] });
      expect(s.logged).toEqual([]);
      expectNoSecrets(s, report);
    },
  );

  it.skipIf(!kind.up || kind.name === 'memory')(
    'two instances running at once over one store re-send each overdue payment once',
    async () => {
      const seed = nextSeed;
      const s = await shop(kind.make(seed));
      const other = createPaymentWatch({
        api: s.api,
        webhook: s.webhook,
        store: kind.make(seed).watch,
        now: s.now,
        requestsPerSecond: 1000,
        logger: false,
      });
      s.fake.outbox.pause();
      for (let i = 0; i < 8; i++) await s.pay(`both-${i}`);
      await s.fake.idle();
      s.advance(16 * MINUTE);
      const [a, b] = await Promise.all([s.watch.reconcileOverdue(), other.reconcileOverdue()]);
      const settled = [...a.settled, ...b.settled].map((p) => p.orderId).sort();
      expect(settled).toEqual([...Array(8).keys()].map((i) => `both-${i}`));
      expect(s.paths.filter((p) => p.includes('/orders/'))).toHaveLength(8);
      expect([...s.runs.values()]).toEqual(Array(8).fill(1));
    },
  );

  it.skipIf(!kind.up)(
    'an API outage longer than maxTries × retryAfterMs reports nothing overdue: once the service answers, each payment is settled once',
    async () => {
      const s = await shop(kind.make(nextSeed));
      s.fake.outbox.pause();
      for (let i = 0; i < 3; i++) await s.pay(`outage-${i}`);
      await s.fake.idle();
      // The same store, asked through a client whose service nothing answers for (a closed port): api.network.
      const gone = createServer();
      const url = await listen(gone);
      await new Promise((resolve) => gone.close(resolve));
      const outages: WatchOutage[] = [];
      const down = createPaymentWatch({
        api: { ...s.api, baseUrl: url },
        webhook: s.webhook,
        store: s.watch.store,
        now: s.now,
        requestsPerSecond: 1000,
        onOverdue: (p) => s.overdue.push(p),
        onUnreachable: (o) => outages.push(o),
        logger: { warn: (line: string) => s.logged.push(line) },
      });
      for (let run = 0; run < 4; run++) {
        s.advance(16 * MINUTE);
        expect((await down.reconcileOverdue()).watching.map((p) => p.tries)).toEqual([0, 0, 0]);
      }
      expect(s.overdue).toEqual([]);
      expect(outages.map((o) => [o.payments.length, (o.error as ApiError).code])).toEqual(
        Array(4).fill([3, 'api.network']),
      );
      expect(s.logged).toHaveLength(4);
      expect(s.logged[0]).toMatch(
        /could not be reached about 3 payment\(s\) \(api\.network: 3\): no try counted/,
      );

      s.advance(16 * MINUTE);
      const report = await s.watch.reconcileOverdue();
      expect(report.settled.map((p) => [p.orderId, p.tries]).sort()).toEqual([
        ['outage-0', 1],
        ['outage-1', 1],
        ['outage-2', 1],
      ]);
      expect([...s.runs.values()]).toEqual(Array(3).fill(1));
      expect(s.overdue).toEqual([]);
      expectNoSecrets(s, report, outages);
    },
  );

  it.skipIf(!kind.up)(
    'reports an order the service never knew once, and never asks for it again',
    async () => {
      const s = await shop(kind.make(nextSeed));
      await s.watch.register({ orderId: 'never-created' });
      s.advance(16 * MINUTE);
      const report = await s.watch.reconcileOverdue();
      expect(report.overdue).toEqual([
        {
          orderId: 'never-created',
          operation: 'purchase',
          createdAt: new Date(NOW),
          tries: 1,
          reason: 'unknown_order',
          lastResult: 'failed',
          errorCode: 'api.not_found',
        },
      ]);
      expect(s.overdue).toEqual(report.overdue);
      expect(s.logged).toHaveLength(1);
      expect(s.logged[0]).toMatch(/service does not know order "never-created" \(purchase/);
      for (let i = 0; i < 3; i++) {
        s.advance(60 * MINUTE);
        await s.watch.reconcileOverdue();
      }
      expect(s.paths.filter((p) => p.includes('/orders/never-created/'))).toHaveLength(1);
      expect(s.overdue).toHaveLength(1);
      expectNoSecrets(s, report);
    },
  );

  it.skipIf(!kind.up)(
    'keeps watching a payment whose webhook said pending (3-D Secure, 2122): settled by its success, reported after maxTries without one',
    async () => {
      const s = await shop(kind.make(nextSeed));
      const created = await s.pay('three-ds', TEST_CARDS.threeDs);
      const waiting = await s.pay('three-ds-abandoned', TEST_CARDS.threeDs);
      await s.fake.idle();
      expect([created.kind, waiting.kind]).toEqual(['direct', 'direct']);
      expect(Object.fromEntries(s.runs)).toEqual({ 'three-ds pending': 1, 'three-ds-abandoned pending': 1 });

      s.advance(16 * MINUTE);
      const first = await s.watch.reconcileOverdue();
      expect(first.watching.map((p) => p.orderId).sort()).toEqual(['three-ds', 'three-ds-abandoned']);
      expect(first.settled).toEqual([]);

      // The customer passes 3-D Secure for one: its success webhook settles it.
      s.fake.confirmThreeDs(s.fake.paymentByOrder('three-ds')!.checkoutId!, THREE_DS_CODE);
      await s.fake.idle();
      expect(s.runs.get('three-ds success')).toBe(1);

      s.advance(16 * MINUTE);
      const second = await s.watch.reconcileOverdue();
      expect(second.watching.map((p) => [p.orderId, p.tries])).toEqual([['three-ds-abandoned', 2]]);
      s.advance(16 * MINUTE);
      const third = await s.watch.reconcileOverdue();
      expect(third.overdue).toEqual([
        expect.objectContaining({
          orderId: 'three-ds-abandoned',
          tries: 3,
          reason: 'unsettled',
          lastResult: 'pending',
          paymentStatus: 'pending',
        }),
      ]);
      expect(s.logged).toHaveLength(1);
      expect(s.logged[0]).toMatch(/"three-ds-abandoned" .* after 3 tries \(last: pending, status pending\)/);
      s.advance(60 * MINUTE);
      expect(await s.watch.reconcileOverdue()).toEqual({ settled: [], watching: [], overdue: [] });
      expectNoSecrets(s, first, second, third);
    },
  );
});
