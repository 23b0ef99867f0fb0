import { RedisStore } from '@payhook/core/redis';
import { Redis } from 'ioredis';
import { REDIS_URL, reachRedis } from '../../../core/test/servers.ts';
import { createBullMQQueue } from '../../src/bullmq.ts';
import type { EngineKit } from './kit.ts';

// Stall detection in about a second, retries a few milliseconds apart.

export const kit: EngineKit = {
  id: 'bullmq',
  title: 'BullMQ',
  reach: reachRedis,
  makeEngine(queue, options = {}) {
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
      backoff: { type: 'exponential', delayMs: 20 },
      lockDurationMs: options.slowStalls ? 30_000 : 1_000,
      stalledIntervalMs: options.slowStalls ? 30_000 : 300,
    });
  },
  async makeStore(prefix) {
    const client = new Redis(REDIS_URL);
    return { store: new RedisStore({ client, prefix }), close: async () => void client.disconnect() };
  },
  server() {
    const url = new URL(REDIS_URL);
    return { host: url.hostname, port: Number(url.port || 6379) };
  },
  // Every key is under a queue name or store prefix of this run; Redis keeps nothing else.
  async dispose() {},
};
