/** How long to wait before each retry of a failed attempt. */
export interface Backoff {
  /** `exponential`: the wait doubles after each failed attempt, from `delayMs`; `fixed`: `delayMs` every time. */
  type: 'exponential' | 'fixed';
  /** The first retry's wait, in milliseconds. */
  delayMs: number;
}

/**
 * The options every engine takes under the same names, so switching engines changes the factory, not these.
 * Times are in milliseconds; an engine that counts seconds rounds up.
 */
export interface QueueEngineOptions {
  /** The queue: web processes and workers of one application use the same. @default 'payhook-notifications' */
  name?: string;
  /**
   * Runs of a job before it is kept as dead (the first and the retries).
   * @default 10 (with the default backoff: retries for about 17 minutes, through a deploy or a short outage)
   */
  attempts?: number;
  /**
   * The wait before each retry.
   * @default { type: 'exponential', delayMs: 2_000 } (2 s, 4 s, 8 s … about 8.5 min before the 10th attempt)
   */
  backoff?: Backoff;
  /**
   * How long a completed job is kept, so a copy delivered meanwhile is answered `duplicate` without a new job;
   * afterwards a copy is queued again and the worker's store answers it duplicate (keep it at the store's `ttlMs`
   * or below).
   * @default 604_800_000 (7 days, core's default `ttlMs`)
   */
  keepCompletedMs?: number;
  /**
   * How long a dead job is kept, listable and replayable (and answering copies `duplicate`), when nobody replays
   * or discards it.
   * @default 2_592_000_000 (30 days)
   */
  keepDeadMs?: number;
}

/** The shared options, checked, with their defaults. */
export interface ResolvedQueueOptions {
  readonly name: string;
  readonly attempts: number;
  readonly backoff: Backoff;
  readonly keepCompletedMs: number;
  readonly keepDeadMs: number;
}

const DAY_MS = 86_400_000;
/** The longest a job is kept: ten years, far beyond any sensible setting, within every engine's arithmetic. */
const MAX_KEEP_MS = 3_650 * DAY_MS;

function refuse(name: string, expected: string, value: unknown): never {
  const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
  throw new TypeError(`[@payhook/queue] ${name} must be ${expected}, not ${shown}.`);
}

/** An integer option from `min` to `max`, or its default; anything else throws a TypeError naming it. */
export function integerOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `from ${min}` : `from ${min} to ${max}`;
    refuse(name, `an integer ${range}`, value);
  }
  return value;
}

/** Milliseconds as whole seconds, rounded up (pg-boss and BullMQ's ages count seconds). */
export function secondsOf(ms: number): number {
  return Math.ceil(ms / 1000);
}

function backoffOption(backoff: Backoff | undefined): Backoff {
  if (backoff === undefined) return { type: 'exponential', delayMs: 2_000 };
  if (typeof backoff !== 'object' || backoff === null) refuse('backoff', '{ type, delayMs }', backoff);
  if (backoff.type !== 'exponential' && backoff.type !== 'fixed') {
    refuse('backoff.type', "'exponential' or 'fixed'", backoff.type);
  }
  if (backoff.delayMs === undefined) refuse('backoff.delayMs', `an integer from 0 to ${DAY_MS}`, undefined);
  return { type: backoff.type, delayMs: integerOption('backoff.delayMs', backoff.delayMs, 0, 0, DAY_MS) };
}

/** Checks the options every engine shares: a TypeError names the first bad one. */
export function resolveQueueOptions(options: QueueEngineOptions): ResolvedQueueOptions {
  const name = options.name ?? 'payhook-notifications';
  if (typeof name !== 'string' || !/^[\w.\-/]+$/.test(name)) {
    refuse('name', 'letters, digits and . - / _', name);
  }
  return {
    name,
    attempts: integerOption('attempts', options.attempts, 10, 1, 1_000),
    backoff: backoffOption(options.backoff),
    keepCompletedMs: integerOption('keepCompletedMs', options.keepCompletedMs, 7 * DAY_MS, 1, MAX_KEEP_MS),
    keepDeadMs: integerOption('keepDeadMs', options.keepDeadMs, 30 * DAY_MS, 1, MAX_KEEP_MS),
  };
}
