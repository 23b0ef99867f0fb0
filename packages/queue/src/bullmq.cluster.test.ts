import { randomUUID } from 'node:crypto';
import type { QueuedNotification } from '@payhook/core';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNodes, REDIS_URL, reachRedis, reachRedisCluster } from '../../core/test/servers.js';
import { createBullMQQueue } from './bullmq.js';
import type { QueueEngine } from './engine.js';

// The BullMQ engine on the shared Redis Cluster (three masters, three replicas). BullMQ's Lua scripts touch several
// keys of a queue at once, which a cluster runs only when they share a slot: a hash tag in the prefix.

const clusterUp = await reachRedisCluster();
const redisUp = await reachRedis();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const job = (key: string): QueuedNotification => ({ key, data: { order_id: key }, secretIndex: 0 });
const signal = () => new AbortController().signal;

async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await probe()) return;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A cluster client as a worker needs it (BullMQ's blocking reads want no retry limit). */
function cluster(): Cluster {
  const client = new Cluster(clusterNodes(), { redisOptions: { maxRetriesPerRequest: null } });
  client.on('error', () => {});
  return client;
}

describe('the BullMQ engine given an ioredis Cluster', () => {
  it('refuses a prefix without a hash tag, naming one', () => {
    const client = { isCluster: true } as unknown as Cluster;
    expect(() => createBullMQQueue({ connection: client, prefix: 'shop' })).toThrow(
      '[@payhook/queue] prefix must hold a hash tag on Redis Cluster, such as "{shop}", so that every key of the queue is in one slot, not "shop".',
    );
  });
});

describe.skipIf(!clusterUp)('the BullMQ engine on a Redis Cluster', () => {
  let client: Cluster;
  let engine: QueueEngine;
  const name = `cluster-${process.pid}`;

  beforeAll(async () => {
    client = cluster();
    engine = createBullMQQueue({
      connection: client,
      name,
      attempts: 2,
      backoff: { type: 'fixed', delayMs: 0 },
    });
  });
  afterAll(async () => {
    await engine?.discard({ all: true });
    await engine?.close();
    for (const node of client.nodes('master')) {
      for (const key of await node.keys(`{bull}:${name}:*`)) await node.del(key);
    }
    client.disconnect();
  });

  it('keeps its keys under the default prefix {bull}, in one slot', async () => {
    const key = `pay:${randomUUID()}`;
    expect(await engine.enqueue(job(key), signal())).toBe('queued');
    const keys = (await Promise.all(client.nodes('master').map((node) => node.keys(`*${name}*`)))).flat();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`{bull}:${name}:`))).toBe(true);
  });

  it('queues one job for copies enqueued at once, runs it once, keeps a failing one dead and replays it', async () => {
    const key = `pay:${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => engine.enqueue(job(key), signal())));
    expect(outcomes.filter((o) => o === 'queued')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(7);

    const ran: string[] = [];
    let failing = true;
    const consumer = await engine.consume(
      async (queued) => {
        ran.push(queued.key!);
        if (failing) throw new Error('the courier is down');
      },
      { concurrency: 2 },
    );
    try {
      await until(async () => (await engine.dead()).some((d) => d.id === key), 'the job dead');
      expect(ran.filter((k) => k === key)).toHaveLength(2);
      failing = false;
      expect(await engine.replay({ ids: [key] })).toBe(1);
      await until(() => ran.filter((k) => k === key).length === 3, 'the replayed job');
      expect((await engine.dead()).map((d) => d.id)).not.toContain(key);
    } finally {
      await consumer.stop(0);
    }
  });
});

describe('the BullMQ engine with waitForReplicas', () => {
  it('refuses a waitForReplicas without a positive replicas and timeoutMs', () => {
    expect(() =>
      createBullMQQueue({
        connection: 'redis://127.0.0.1:1',
        waitForReplicas: { replicas: 0, timeoutMs: 10 },
      }),
    ).toThrow('[@payhook/queue] waitForReplicas.replicas must be an integer from 1, not 0.');
    expect(() =>
      createBullMQQueue({
        connection: 'redis://127.0.0.1:1',
        waitForReplicas: { replicas: 1, timeoutMs: 0 },
      }),
    ).toThrow('[@payhook/queue] waitForReplicas.timeoutMs must be an integer from 1, not 0.');
  });

  describe.skipIf(!redisUp)('on a Redis without replicas', () => {
    let engine: QueueEngine;
    const name = `no-replicas-${process.pid}`;
    beforeAll(() => {
      engine = createBullMQQueue({
        connection: REDIS_URL,
        name,
        waitForReplicas: { replicas: 1, timeoutMs: 50 },
      });
    });
    afterAll(async () => {
      await engine?.close();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`bull:${name}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });

    it('rejects the enqueue, saying how many replicas acknowledged the job, so the web side answers 503', async () => {
      await expect(engine.enqueue(job('k-short'), signal())).rejects.toThrow(
        "[@payhook/queue] the job was added on its Redis master, but 0 of the 1 replicas waitForReplicas asks for acknowledged it within 50 ms: a failover now could lose it, so it is not answered queued (the service's retry finds it, or adds it again once it was lost).",
      );
    });
  });

  describe.skipIf(!clusterUp)('on the Redis Cluster', () => {
    let client: Cluster;
    let engine: QueueEngine;
    const name = `replicas-${process.pid}`;
    beforeAll(() => {
      client = cluster();
      engine = createBullMQQueue({
        connection: client,
        name,
        waitForReplicas: { replicas: 1, timeoutMs: 1_000 },
      });
    });
    afterAll(async () => {
      await engine?.close();
      for (const node of client.nodes('master')) {
        for (const key of await node.keys(`{bull}:${name}:*`)) await node.del(key);
      }
      client.disconnect();
    });

    it('answers queued once the replica of the queue master acknowledged the job, duplicate for a copy', async () => {
      expect(await engine.enqueue(job('k-replicated'), signal())).toBe('queued');
      expect(await engine.enqueue(job('k-replicated'), signal())).toBe('duplicate');
    });
  });
});
