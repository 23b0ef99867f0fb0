import type { QueuedNotification } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrivateRedis, reachRedis } from '../../core/test/servers.js';
import { createBullMQQueue } from './bullmq.js';
import type { QueueEngine } from './engine.js';

// A private redis-server (stopped and started again by the test), never the shared one.
const redisUp = await reachRedis();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `probe` is true (a bound against hanging, not a measure of speed). */
async function until(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await probe()) return;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const job = (key: string): QueuedNotification => ({ key, data: { order_id: key }, secretIndex: 0 });
const signal = () => new AbortController().signal;

describe.skipIf(!redisUp)('the BullMQ queue engine when Redis stops', () => {
  let redis: PrivateRedis;
  let engine: QueueEngine;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    engine = createBullMQQueue({
      connection: redis.url,
      name: `outage-${process.pid}`,
      backoff: { type: 'fixed', delayMs: 0 },
      lockDurationMs: 1_000,
      stalledIntervalMs: 500,
    });
  });
  afterAll(async () => {
    await engine?.close();
    await redis?.dispose();
  });

  it('keeps the worker process up while Redis is stopped, and takes jobs again once it is back', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const ran: string[] = [];
      await engine.consume(async (queued) => void ran.push(queued.key!), { concurrency: 2 });
      await engine.enqueue(job('k-before'), signal());
      await until(() => ran.includes('k-before'), 'the job before the outage');
      await redis.stop();
      // While it is down the enqueue waits (the web side's timeout answers 503); it lands once Redis is back.
      const during = engine.enqueue(job('k-during'), signal());
      await sleep(1_500);
      await redis.start();
      expect(await during).toBe('queued');
      await until(() => ran.includes('k-during'), 'the job queued during the outage');
      expect(ran).toEqual(['k-before', 'k-during']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe.skipIf(!redisUp)('the BullMQ queue engine and what a delivery can put in a job', () => {
  let engine: QueueEngine;

  beforeAll(async () => {
    const { REDIS_URL } = await import('../../core/test/servers.js');
    engine = createBullMQQueue({ connection: REDIS_URL, name: `hostile-${process.pid}`, attempts: 1 });
  });
  afterAll(async () => {
    await engine?.discard({ all: true });
    await engine?.close();
  });

  const keys = ['pay:1/2%3A?#x', 'ключ:☃:𝄞', `${'k'.repeat(10_000)}:purchase`, 'k.%41', '123'];

  it('keeps keys with : / % unicode and 10,000 characters apart, and a later copy never overwrites the job', async () => {
    for (const key of keys) expect(await engine.enqueue(job(key), signal())).toBe('queued');
    const forged = { ...job(keys[0]!), data: { order_id: 'other', amount: 1 } };
    expect(await engine.enqueue(forged, signal())).toBe('duplicate');
    const seen = new Map<string, unknown>();
    const consumer = await engine.consume(
      async (queued) => {
        seen.set(queued.key!, queued.data);
        throw new Error('dead at once');
      },
      { concurrency: 4 },
    );
    await until(async () => (await engine.dead({ limit: 10 })).length === keys.length, 'every job dead');
    await consumer.stop(0);
    expect([...seen.keys()].sort()).toEqual([...keys].sort());
    expect(seen.get(keys[0]!)).toEqual({ order_id: keys[0] });
    const dead = await engine.dead({ limit: 10 });
    expect(dead.map((d) => d.id).sort()).toEqual([...keys].sort());
    // Each is named by its own key, and only by it.
    expect(await engine.discard({ ids: [keys[3]!] })).toBe(1);
    expect(await engine.discard({ ids: ['k.A', 'k.%2541'] })).toBe(0);
  });

  it('carries a __proto__ field as data, without polluting any prototype', async () => {
    const data = JSON.parse(
      '{"order_id":"proto","__proto__":{"polluted":true},"constructor":{"prototype":{"p":1}}}',
    );
    expect(await engine.enqueue({ key: 'proto:1', data, secretIndex: 0 }, signal())).toBe('queued');
    let received: Record<string, unknown> | undefined;
    const consumer = await engine.consume(
      async (queued) => {
        received = queued.data;
      },
      { concurrency: 1 },
    );
    await until(() => received !== undefined, 'the job');
    await consumer.stop(0);
    expect(Object.keys(received!)).toEqual(['order_id', '__proto__', 'constructor']);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
  });
});
