import type { WebhookError } from './errors.js';
import type { WebhookHandlerOptions } from './handler.js';
import type { ExactlyOnceOptions } from './protocol/exactly-once.js';
import { OrderingGuard, type OrderingOptions } from './protocol/ordering.js';
import type { NotificationQueue } from './protocol/queue.js';
import { systemClock } from './runtime/clock.js';
import { type DedupeStore, isTransactionalStore, type TransactionalStore } from './stores/contract.js';
import { MemoryStore } from './stores/memory.js';

// The handler's options checked once, when it is built: a wrong one throws a TypeError naming it.

/** The exactly-once protocol's options: the store and the time options checked, with their defaults. */
export function protocolOptions<C>(
  options: WebhookHandlerOptions<C>,
  report: (error: WebhookError) => void,
): ExactlyOnceOptions {
  return {
    store: checkedStore(options as WebhookHandlerOptions<never>),
    leaseMs: duration('leaseMs', options.leaseMs, 15_000),
    ttlMs: positive('ttlMs', options.ttlMs, 7 * 24 * 60 * 60 * 1000),
    inFlightWaitMs: duration('inFlightWaitMs', options.inFlightWaitMs, 5_000, 0),
    handlerTimeoutMs: duration('handlerTimeoutMs', options.handlerTimeoutMs, 20_000),
    storeTimeoutMs: storeTimeoutMs(options),
    failOpen: options.failOpen ?? false,
    clock: systemClock,
    report,
  };
}

/** The longest one call to the store, or one `enqueue`, may take. */
export function storeTimeoutMs(options: WebhookHandlerOptions<never>): number {
  return duration('storeTimeoutMs', options.storeTimeoutMs, 2_000);
}

/** The `queue` option, when set: an object with `enqueue`. */
export function checkedQueue(queue: NotificationQueue | undefined): NotificationQueue | undefined {
  if (queue !== undefined && typeof (queue as Partial<NotificationQueue> | null)?.enqueue !== 'function') {
    throw new TypeError(
      '[@payhook/core] queue must have enqueue (a NotificationQueue, as @payhook/queue builds).',
    );
  }
  return queue;
}

/** The `store` option: the default `MemoryStore`, none (`false`), or one with the methods of a store contract. */
function checkedStore(options: WebhookHandlerOptions<never>): DedupeStore | TransactionalStore | undefined {
  const store = options.store === false ? undefined : (options.store ?? new MemoryStore());
  if (store !== undefined && !isStore(store)) {
    throw new TypeError(
      '[@payhook/core] store must have claim, renew, commit and release (a DedupeStore), or transaction (a TransactionalStore).',
    );
  }
  if (store !== undefined && isTransactionalStore(store) && options.failOpen) {
    throw new TypeError(
      '[@payhook/core] failOpen cannot be used with a transactional store: handlers would run without the transaction their writes need (inbox.client(delivery)).',
    );
  }
  return store;
}

export function bodyLimits(options: WebhookHandlerOptions<never>): {
  maxBodyBytes: number;
  readTimeoutMs: number;
} {
  return {
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 1024 * 1024),
    readTimeoutMs: duration('readTimeoutMs', options.readTimeoutMs, 10_000),
  };
}

export function orderingGuard(ordering: boolean | OrderingOptions | undefined): OrderingGuard | undefined {
  return ordering ? new OrderingGuard(ordering === true ? undefined : ordering) : undefined;
}

/** Node's timers take at most 2^31 - 1 ms; a longer wait would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A time option: a finite number of milliseconds from `min` (default 1) to about 24.8 days, or its default. */
function duration(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
    throw new TypeError(
      `[@payhook/core] ${name} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}, not ${String(value)}.`,
    );
  }
  return value;
}

/** A size or lifetime option: a positive finite number, or its default. */
function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`[@payhook/core] ${name} must be a positive number, not ${String(value)}.`);
  }
  return value;
}

function isStore(store: object): boolean {
  const s = store as Partial<DedupeStore & TransactionalStore>;
  if (typeof s.transaction === 'function') return true;
  return ['claim', 'renew', 'commit', 'release'].every(
    (method) => typeof (s as Record<string, unknown>)[method] === 'function',
  );
}
