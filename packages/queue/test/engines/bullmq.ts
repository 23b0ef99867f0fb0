import { RedisStore } from '@payhook/core/redis';
import { Redis } from 'ioredis';
import { createBullMQQueue } from '../../src/bullmq.ts';
import type { QueueEngine } from '../../src/engine.ts';

// The BullMQ engine as the queue suite and its child worker build it: stall detection in about a second, retries
// a few milliseconds apart, so every test finishes in seconds.

/** The Redis the tests share: `REDIS_URL`, or the local default. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The engine on `queue`, through `port` on 127.0.0.1 (a proxy in front of Redis) when given; `slowStalls`: the stall
 * detection of production (30 s), so only an explicit hand-back can move a running job within a test.
 */
export function makeEngine(
  queue: string,
  options: { attempts?: number; port?: number; slowStalls?: boolean } = {},
): QueueEngine {
  const url = new URL(REDIS_URL);
  if (options.port !== undefined) {
    url.hostname = '127.0.0.1';
    url.port = String(options.port);
  }
  return createBullMQQueue({
    connection: url.toString(),
    name: queue,
    prefix: 'payhook-test',
    attempts: options.attempts ?? 5,
    backoffMs: 20,
    lockDurationMs: options.slowStalls ? 30_000 : 1_000,
    stalledIntervalMs: options.slowStalls ? 30_000 : 300,
  });
}

/** A duplicate store every process of a test shares; `close` ends its connection. */
export function makeStore(prefix: string): { store: RedisStore; close(): Promise<void> } {
  const client = new Redis(REDIS_URL);
  return { store: new RedisStore({ client, prefix }), close: async () => void client.disconnect() };
}

/** The server, for a proxy in front of it. */
export function server(): { host: string; port: number } {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
}
