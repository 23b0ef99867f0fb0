import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import { purchaseKey, STORE_SECRET, signedPurchase } from '../../test/bodies.js';
import { formRequest } from '../../test/deliveries.js';
import { clusterNodes, freePort, REDIS_URL, reachRedis, reachRedisCluster } from '../../test/servers.js';
import {
  commitAfterLapse,
  expectOnceUnderConcurrency,
  fencesOfTakeovers,
  takeOver,
} from '../../test/takeovers.js';
import { createWebhookHandler } from '../handler.js';
import { type RedisClientLike, RedisStore } from './redis.js';

/** How long a lease's key outlives its lease in redis.ts (kept there private). */
const FENCE_MEMORY_MS = 24 * 60 * 60 * 1000;

const redisUp = await reachRedis();
const clusterUp = await reachRedisCluster();
const PREFIX = `payhook-test:redis-unit:${process.pid}:`;

interface Flavour {
  name: string;
  /** `offline` set: the server is down; commands are refused at once (false) or queued for a reconnect (true). */
  connect(
    url: string,
    options?: { offline?: boolean },
  ): Promise<{ client: RedisClientLike; close(): Promise<void> }>;
}

const FLAVOURS: Flavour[] = [
  {
    name: 'ioredis',
    async connect(url, options) {
      const client = new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: options?.offline ?? true,
        maxRetriesPerRequest: options?.offline ? null : 1,
        retryStrategy: () => 50,
      });
      client.on('error', () => {});
      const connecting = client.connect().catch(() => {});
      if (options?.offline === undefined) await connecting;
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'node-redis',
    async connect(url, options) {
      const client = createClient({
        url,
        disableOfflineQueue: options?.offline === false,
        socket: { reconnectStrategy: () => 50 },
      });
      client.on('error', () => {});
      // node-redis keeps connect() pending while it retries a dead server.
      const connecting = client.connect().catch(() => {});
      if (options?.offline === undefined) await connecting;
      return { client, close: async () => void client.destroy() };
    },
  },
];

/** The same clients on the shared Redis Cluster (three masters, three replicas): each script's one key finds its node. */
const CLUSTER_FLAVOURS: Flavour[] = [
  {
    name: 'an ioredis Cluster',
    async connect() {
      const client = new Cluster(clusterNodes());
      client.on('error', () => {});
      await new Promise((resolve) => client.once('ready', resolve));
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'a node-redis cluster',
    async connect() {
      const client = createCluster({
        rootNodes: clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => void (await client.close()) };
    },
  },
];

/** What the tests read and write beside the store: one Redis, or an ioredis Cluster (each key on its own node). */
interface Admin {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
  pttl(key: string): Promise<number>;
  pexpire(key: string, ms: number): Promise<number>;
  del(key: string): Promise<number>;
  exists(key: string): Promise<number>;
  disconnect(): void;
}

const SERVERS = [
  ...FLAVOURS.map((flavour) => ({ flavour, on: 'one Redis', up: redisUp })),
  ...CLUSTER_FLAVOURS.map((flavour) => ({ flavour, on: 'the Redis Cluster', up: clusterUp })),
];

describe.each(SERVERS)('RedisStore with $flavour.name on $on', ({ flavour, on, up }) => {
  // Every test below skips when its server is not there (reachRedis / reachRedisCluster said so, loudly).
  const it = up ? test : test.skip;
  let admin: Admin;
  let client: RedisClientLike;
  let close: () => Promise<void>;
  let store: RedisStore;
  const prefix = `${PREFIX}${flavour.name}:`;
  const cluster = on === 'the Redis Cluster';

  beforeAll(async () => {
    if (!up) return;
    admin = cluster ? new Cluster(clusterNodes()) : new Redis(REDIS_URL);
    ({ client, close } = await flavour.connect(REDIS_URL));
    store = new RedisStore({ client, prefix });
  });

  afterAll(async () => {
    if (!up) return;
    const nodes = admin instanceof Cluster ? admin.nodes('master') : [admin as Redis];
    for (const node of nodes) {
      const keys = await node.keys(`${prefix}*`);
      for (const key of keys) await node.del(key);
    }
    await close();
    admin.disconnect();
  });

  /** Ends the key's lease as if it had run out, keeping the key (and its fence), as Redis time would. */
  async function expire(key: string) {
    await admin.pexpire(prefix + key, FENCE_MEMORY_MS);
  }

  it('claims a new key with fence 1 and a token, then answers in_flight until it is committed, then duplicate', async () => {
    const key = randomUUID();
    const claim = await store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(claim.fence).toBe(1);
    expect(claim.token).toMatch(/^1:[0-9a-f]{32}$/);
    expect(await admin.get(prefix + key)).toBe(claim.token);
    const left = await admin.pttl(prefix + key);
    expect(left - FENCE_MEMORY_MS).toBeGreaterThan(59_000);
    expect(left - FENCE_MEMORY_MS).toBeLessThanOrEqual(60_000);

    expect(await store.claim(key, 60_000)).toEqual({ status: 'in_flight' });
    expect(await store.commit(key, claim.token, 3_600_000)).toBe(true);
    expect(await admin.get(prefix + key)).toBe('done');
    expect(await admin.pttl(prefix + key)).toBeGreaterThan(3_590_000);
    expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
  });

  it('each takeover of a lease that ran out gets the next fence', async () => {
    expect(await fencesOfTakeovers(store, expire)).toEqual([1, 2, 3]);
  });

  it('release ends the caller own lease, so the next copy is claimed with the next fence', async () => {
    const key = randomUUID();
    const first = await store.claim(key, 60_000);
    if (first.status !== 'claimed') throw new Error('expected a claim');
    await store.release(key, first.token);
    expect(await admin.pttl(prefix + key)).toBeLessThanOrEqual(FENCE_MEMORY_MS);
    const second = await store.claim(key, 60_000);
    expect(second).toMatchObject({ status: 'claimed', fence: 2 });
  });

  it('release and renew with a stale token leave the lease another process took over', async () => {
    const key = randomUUID();
    const { stale: late, current } = await takeOver(store, key, expire);
    expect(await store.renew(key, late.token, 60_000)).toBe(false);
    await store.release(key, late.token);
    expect(await admin.get(prefix + key)).toBe(current.token);
    expect(await store.claim(key, 60_000)).toEqual({ status: 'in_flight' });
  });

  it('a stale commit answers false and leaves the newer claim lease intact', async () => {
    const key = randomUUID();
    const { stale, current } = await takeOver(store, key, expire);
    expect(current.fence).toBe(2);
    const before = await admin.pttl(prefix + key);
    expect(await store.commit(key, stale.token, 3_600_000)).toBe(false);
    expect(await admin.get(prefix + key)).toBe(current.token);
    expect(await admin.pttl(prefix + key)).toBeGreaterThan(before - 1_000);
    expect(await store.commit(key, current.token, 3_600_000)).toBe(true);
    expect(await store.commit(key, current.token, 3_600_000)).toBe(false);
    expect(await admin.get(prefix + key)).toBe('done');
  });

  it('commit marks done when the caller lease ran out and nobody took it (the work ran once)', async () => {
    const { key, committed } = await commitAfterLapse(store, expire);
    expect(committed).toBe(true);
    expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
  });

  it('commit marks done when the key is gone altogether (a Redis restarted without persistence)', async () => {
    const key = randomUUID();
    const claim = await store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await admin.del(prefix + key);
    expect(await store.commit(key, claim.token, 60_000)).toBe(true);
    expect(await store.claim(key, 60_000)).toEqual({ status: 'duplicate' });
  });

  it('forget deletes a done key and leaves a leased one (its fence with it)', async () => {
    const [done, leased] = [randomUUID(), randomUUID()];
    const claim = await store.claim(done, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.commit(done, claim.token, 60_000);
    const lease = await store.claim(leased, 60_000);
    await store.forget(done);
    await store.forget(leased);
    expect(await admin.exists(prefix + done)).toBe(0);
    expect(await admin.get(prefix + leased)).toBe((lease as { token: string }).token);
  });

  it('release after commit leaves the done marker', async () => {
    const key = randomUUID();
    const claim = await store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await store.commit(key, claim.token, 60_000);
    await store.release(key, claim.token);
    expect(await admin.get(prefix + key)).toBe('done');
  });

  it('treats a lease written before fences (a plain token) as live, and commits over it only with its token', async () => {
    const key = randomUUID();
    const old = 'a'.repeat(32);
    await admin.set(prefix + key, old, 'PX', 60_000);
    expect(await store.claim(key, 60_000)).toEqual({ status: 'in_flight' });
    expect(await store.commit(key, 'b'.repeat(32), 60_000)).toBe(false);
    expect(await store.renew(key, old, 60_000)).toBe(true);
    expect(await store.commit(key, old, 60_000)).toBe(true);
  });

  it('claims an expired done key again (TTL on read, by Redis)', async () => {
    const key = randomUUID();
    await admin.set(prefix + key, 'done', 'PX', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await store.claim(key, 60_000)).status).toBe('claimed');
  });

  it('grants one of 64 concurrent claims, and runs the handler once for 64 concurrent copies', async () => {
    const key = await expectOnceUnderConcurrency(store);
    expect(await admin.get(prefix + key)).toBe('done');
  });

  it('through the handler: a failing handler releases the lease and the redelivery is handled', async () => {
    const paymentId = randomUUID();
    let calls = 0;
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      store,
      logger: false,
      handle: () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
    });
    const body = signedPurchase(paymentId);
    const failed = await webhook(formRequest(body), undefined);
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.body).error.code).toBe('handler.failed');
    // The lease ended; the key stays with its fence.
    expect(await admin.pttl(prefix + purchaseKey(paymentId))).toBeLessThanOrEqual(FENCE_MEMORY_MS);
    const retried = await webhook(formRequest(body), undefined);
    expect(retried.status).toBe(200);
    expect(retried.body).toBe('{"ok":true,"outcome":"handled"}');
    expect(calls).toBe(2);
  });

  it('uses the default prefix payhook:', async () => {
    const key = `${PREFIX}default-prefix-${randomUUID()}`;
    const plain = new RedisStore({ client });
    expect(plain.prefix).toBe('payhook:');
    const claim = await plain.claim(key, 5_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    expect(await admin.get(`payhook:${key}`)).toBe(claim.token);
    await plain.commit(key, claim.token, 1_000);
  });
});

describe.each(FLAVOURS)('RedisStore with $name when Redis is unreachable', (flavour) => {
  it('answers 503 store.unavailable naming redis, and runs the handler with failOpen', async () => {
    const port = await freePort();
    const { client, close } = await flavour.connect(`redis://127.0.0.1:${port}`, { offline: false });
    try {
      const store = new RedisStore({ client, prefix: PREFIX });
      let calls = 0;
      const errors: string[] = [];
      const options = {
        secret: STORE_SECRET,
        store,
        logger: false as const,
        handle: () => void calls++,
        onError: (error: { code: string }) => void errors.push(error.code),
      };
      const body = signedPurchase();
      const closed = await createWebhookHandler(options)(formRequest(body), undefined);
      expect(closed.status).toBe(503);
      expect(closed.headers['retry-after']).toBe('1');
      const error = JSON.parse(closed.body).error;
      expect(error.code).toBe('store.unavailable');
      expect(error.message).toBe(
        "[@payhook/core] the duplicate store (redis) failed; nothing was marked processed, so the service's retry is safe.",
      );
      expect(calls).toBe(0);

      const open = await createWebhookHandler({ ...options, failOpen: true })(formRequest(body), undefined);
      expect(open.status).toBe(200);
      expect(open.body).toBe('{"ok":true,"outcome":"handled"}');
      expect(calls).toBe(1);
      expect(errors).toEqual(['store.unavailable', 'store.unavailable']);
    } finally {
      await close();
    }
  });

  it('answers 503 after storeTimeoutMs while the client queues commands for a reconnect', async () => {
    const port = await freePort();
    const { client, close } = await flavour.connect(`redis://127.0.0.1:${port}`, { offline: true });
    try {
      const store = new RedisStore({ client, prefix: PREFIX });
      const handler = createWebhookHandler({
        secret: STORE_SECRET,
        store,
        storeTimeoutMs: 200,
        logger: false,
        handle: () => {},
      });
      const result = await handler(formRequest(signedPurchase()), undefined);
      expect(result.status).toBe(503);
      expect(JSON.parse(result.body).error).toEqual({
        code: 'store.unavailable',
        message:
          "[@payhook/core] the duplicate store (redis) did not answer within 200 ms (storeTimeoutMs); nothing was marked processed, so the service's retry is safe.",
      });
    } finally {
      await close();
    }
  });
});

describe('RedisStore options', () => {
  it('refuses something that is not a Redis client', () => {
    expect(() => new RedisStore({ client: {} as RedisClientLike })).toThrow(
      '[@payhook/core] RedisStore needs a Redis client with eval: pass an ioredis or node-redis client.',
    );
  });
});
