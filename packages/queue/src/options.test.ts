import { describe, expect, it } from 'vitest';
import { type BullMQQueueOptions, createBullMQQueue } from './bullmq.js';
import type { QueueEngineOptions } from './options.js';
import { createPostgresQueue } from './postgres.js';
import { resolveOptions } from './postgres-options.js';

// Refused before any connection is opened: no server needed.
const engines = [
  ['BullMQ', (o: QueueEngineOptions) => createBullMQQueue({ connection: 'redis://127.0.0.1:1', ...o })],
  ['PostgreSQL', (o: QueueEngineOptions) => createPostgresQueue({ connectionString: 'postgres://x', ...o })],
] as const;

describe.each(engines)('the shared options of the %s engine', (_, create) => {
  it.each([
    [{ attempts: 0 }, 'attempts must be an integer from 1 to 1000, not 0.'],
    [{ attempts: 2.5 }, 'attempts must be an integer from 1 to 1000, not 2.5.'],
    [
      { backoff: { type: 'linear', delayMs: 10 } },
      "backoff.type must be 'exponential' or 'fixed', not \"linear\".",
    ],
    [
      { backoff: { type: 'fixed', delay: 10 } },
      'backoff.delayMs must be an integer from 0 to 86400000, not undefined.',
    ],
    [
      { backoff: { type: 'fixed', delayMs: -1 } },
      'backoff.delayMs must be an integer from 0 to 86400000, not -1.',
    ],
    [{ backoff: 2_000 }, 'backoff must be { type, delayMs }, not 2000.'],
    [{ keepCompletedMs: 0 }, 'keepCompletedMs must be an integer from 1 to 315360000000, not 0.'],
    [{ keepDeadMs: Number.NaN }, 'keepDeadMs must be an integer from 1 to 315360000000, not NaN.'],
    [{ name: 'a:b' }, 'name must be letters, digits and . - / _, not "a:b".'],
  ])('throws a TypeError naming the option for %j', (options, message) => {
    expect(() => create(options as QueueEngineOptions)).toThrow(new TypeError(`[@payhook/queue] ${message}`));
  });
});

describe('engine-specific options', () => {
  it.each([
    [{ lockDurationMs: 0 }, 'lockDurationMs must be an integer from 1, not 0.'],
    [{ stalledIntervalMs: 1.5 }, 'stalledIntervalMs must be an integer from 1, not 1.5.'],
    [{ maxStalledCount: -1 }, 'maxStalledCount must be an integer from 0, not -1.'],
  ])('BullMQ refuses %j', (options, message) => {
    expect(() =>
      createBullMQQueue({ connection: 'redis://127.0.0.1:1', ...(options as Partial<BullMQQueueOptions>) }),
    ).toThrow(new TypeError(`[@payhook/queue] ${message}`));
  });

  it('gives pg-boss whole seconds, rounded up, and its defaults in seconds', () => {
    const base = { connectionString: 'postgres://x' };
    expect(
      resolveOptions({
        ...base,
        backoff: { type: 'fixed', delayMs: 1_500 },
        stallMs: 2_001,
        maintenanceIntervalMs: 1,
        keepCompletedMs: 1,
        keepDeadMs: 60_000,
      }),
    ).toMatchObject({
      retryDelay: 2,
      retryBackoff: false,
      stallSeconds: 3,
      maintenanceIntervalSeconds: 1,
      completedRetentionSeconds: 1,
      deadRetentionSeconds: 60,
    });
    expect(resolveOptions(base)).toMatchObject({
      attempts: 10,
      retryDelay: 2,
      retryBackoff: true,
      stallSeconds: 60,
      maintenanceIntervalSeconds: 30,
      pollingIntervalMs: 1_000,
      completedRetentionSeconds: 7 * 86_400,
      deadRetentionSeconds: 30 * 86_400,
    });
    // pg-boss's exponential backoff needs at least a second.
    expect(resolveOptions({ ...base, backoff: { type: 'exponential', delayMs: 0 } }).retryDelay).toBe(1);
  });
});
