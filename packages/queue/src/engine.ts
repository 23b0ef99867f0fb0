import type { NotificationQueue, QueuedNotification } from '@payhook/core';

/**
 * One queue engine (BullMQ, PostgreSQL) behind the interface the worker, the CLI and the web side share. An engine
 * never decides what a notification means: it stores jobs under their notification key, hands them to `consume`,
 * retries the ones that failed with backoff, and keeps the ones that failed every attempt as dead.
 */
export interface QueueEngine extends NotificationQueue {
  /** The engine's name, for logs and the CLI (`bullmq`, `postgres`). */
  readonly name: string;
  /**
   * Takes jobs until `stop` resolves: calls `run` for each, at most `concurrency` at once. A `run` that resolves
   * completes the job; one that rejects fails this attempt (retried after the backoff, dead after the last). A job
   * whose worker died is handed to another one by the engine's own stall detection.
   */
  consume(run: JobRunner, options: ConsumeOptions): Promise<Consumer>;
  /** Dead jobs, oldest first: those that failed every attempt and were not replayed or discarded. */
  dead(filter?: DeadFilter): Promise<DeadNotification[]>;
  /** Queues dead jobs again (with their attempts reset): those with the given ids, or all that match the filter. */
  replay(selection: DeadSelection): Promise<number>;
  /** Deletes dead jobs for good: those with the given ids, or all that match the filter. */
  discard(selection: DeadSelection): Promise<number>;
  /**
   * Waiting jobs, oldest first: queued and not running, waiting for a worker or for their next attempt after a
   * failure (`attempts` made so far).
   */
  waiting(filter?: WaitingFilter): Promise<WaitingNotification[]>;
  /**
   * Deletes waiting jobs for good, before any worker runs them: those with the given ids, or all queued since a
   * time. A running job is left alone; a copy of a purged notification delivered afterwards is queued again.
   */
  purge(selection: WaitingSelection): Promise<number>;
  /** Closes the engine's connections (not the ones the caller handed it). */
  close(): Promise<void>;
}

/**
 * Runs one job's notification; rejects to fail the attempt (an {@link UnrecoverableJobError}: to keep the job as
 * dead at once). `signal` aborts when the worker shuts down.
 */
export type JobRunner = (job: QueuedNotification, attempt: JobAttempt) => Promise<void>;

/** Which attempt a run is, of how many the engine makes. */
export interface JobAttempt {
  /** 1 for the first run, 2 for the first retry… */
  readonly number: number;
  readonly of: number;
  /**
   * Aborts when the job is handed back. `createWorker` reads it only once a handler reads `delivery.signal`, so an
   * engine may make it then (a getter): payhook's engines do, sparing a signal per job.
   */
  readonly signal: AbortSignal;
}

export interface ConsumeOptions {
  /** Jobs run at once by this worker. */
  concurrency: number;
}

/** A running consumer: `stop` takes no new job, then waits up to `graceMs` for running ones and hands back the rest. */
export interface Consumer {
  stop(graceMs: number): Promise<void>;
}

/** A notification whose job failed every attempt. */
export interface DeadNotification {
  /** The notification key, on every engine (a UUID for a notification without one): `replay` and `discard` take it. */
  readonly id: string;
  readonly job: QueuedNotification;
  /**
   * The last attempt's error: its `code` (a payhook code such as `handler.failed`, when it has one), payhook's
   * message, and the `reason` the worker's opt-in `failureReason` gave for what the handler threw (else absent).
   */
  readonly error: { readonly code: string | undefined; readonly message: string; readonly reason?: string };
  readonly attempts: number;
  /** When the job was queued and when its last attempt failed. */
  readonly queuedAt: Date;
  readonly failedAt: Date;
}

/** A notification whose job is queued and not running. */
export interface WaitingNotification {
  /** The notification key, on every engine (a UUID for a notification without one): `purge` takes it. */
  readonly id: string;
  readonly job: QueuedNotification;
  /** Attempts made so far: 0 until its first run failed. */
  readonly attempts: number;
  /** When the job was queued. */
  readonly queuedAt: Date;
}

export interface WaitingFilter {
  /** Only jobs queued at or after this time. */
  since?: Date;
  /** At most this many. @default 100 */
  limit?: number;
}

/** Waiting jobs by id, or all those queued since a time (`{ all: true }` with no `since` for every one). */
export type WaitingSelection =
  | { readonly ids: readonly string[] }
  | { readonly all: true; readonly since?: Date };

export interface DeadFilter {
  /** Only jobs whose last attempt failed at or after this time. */
  since?: Date;
  /** At most this many. @default 100 */
  limit?: number;
}

/** Dead jobs by id, or all those a filter matches (`{ all: true }` with no `since` for every dead job). */
export type DeadSelection =
  | { readonly ids: readonly string[] }
  | { readonly all: true; readonly since?: Date };

/** The longest reason a failed attempt keeps: a short diagnosis on one line, never a payload. */
const REASON_LIMIT = 200;

/**
 * The reason a failed attempt's error carries (the worker's `failureReason`), on one line and cut to 200
 * characters; `undefined` when it has none.
 */
export function reasonOf(error: unknown): string | undefined {
  const reason = (error as { reason?: unknown } | null)?.reason;
  if (typeof reason !== 'string') return undefined;
  const line = reason.replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > REASON_LIMIT ? `${line.slice(0, REASON_LIMIT)}…` : line;
}

/**
 * A refusal no retry can change, such as a job whose notification no longer parses: an engine keeps the job as
 * dead at once, with this error's `code` and message, instead of spending its remaining attempts.
 *
 * @example
 * throw new UnrecoverableJobError('[@payhook/core] the notification is missing order_id.', { code: 'notification.invalid' });
 */
export class UnrecoverableJobError extends Error {
  override readonly name = 'UnrecoverableJobError';
  /** The payhook code of the refusal (`notification.invalid`), when it has one. */
  readonly code: string | undefined;

  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.code = options.code;
  }
}
