import { randomUUID } from 'node:crypto';
import type { QueuedNotification } from '@payhook/core';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNodes, reachRedisCluster } from '../../core/test/servers.js';
import { createBullMQQueue } from './bullmq.js';
import type { QueueEngine } from './engine.js';

// The BullMQ engine on the shared Redis Cluster (three masters, three replicas). BullMQ's Lua scripts touch several
// keys of a queue at once, which a cluster runs only when they share a slot: a hash tag in the prefix.

const clusterUp = await reachRedisCluster();

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
