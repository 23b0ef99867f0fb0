import type { QueuedNotification } from '@payhook/core';
import type { Job } from 'bullmq';
import { type DeadNotification, reasonOf, type WaitingNotification } from './engine.js';

/** What a BullMQ job's data holds: the notification's job, and which enqueue wrote it (`copy`). */
export interface StoredJob extends QueuedNotification {
  /** A random id per `enqueue`: the one found in the stored job is the enqueue that added it. */
  readonly copy: string;
}

/**
 * A notification key as a BullMQ job id. BullMQ refuses ids with `:` (notification keys have them) and integer ids,
 * so the key is percent-encoded (`:` becomes `%3A`, reversibly) behind a `k.` prefix; a notification without a key
 * gets the enqueue's random UUID, as on the PostgreSQL engine, so it is never taken for another.
 */
export function jobIdOf(key: string | undefined, copy: string): string {
  return key === undefined ? copy : `k.${encodeURIComponent(key)}`;
}

/**
 * The BullMQ job ids a dead job may be named by: its notification key (as `dead()` reports it) or its job id
 * (`k.…`, or a UUID for a notification without a key).
 */
export function jobIdsOf(ids: readonly string[]): string[] {
  return [...new Set(ids.flatMap((id) => [jobIdOf(id, ''), id]))];
}

/** The job a worker runs: the stored data without the enqueue's `copy`. */
export function queuedOf(data: StoredJob): QueuedNotification {
  const { key, data: raw, secretIndex, secretId } = data;
  return secretId === undefined ? { key, data: raw, secretIndex } : { key, data: raw, secretIndex, secretId };
}

const CODED = /^([a-z_]+\.[a-z_]+): ([\s\S]*)$/;
/** Before the opt-in reason, after a coded message (payhook's messages are one line; a reason is made one). */
const REASON = '\nreason: ';

/**
 * The reason BullMQ stores for a failed attempt: the payhook code, then the message, then the worker's opt-in
 * reason on its own line (never the error's cause).
 */
export function failureOf(error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code !== 'string' || !CODED.test(`${code}: `)) return new Error(message);
  const reason = reasonOf(error);
  return new Error(`${code}: ${message}${reason === undefined ? '' : `${REASON}${reason}`}`);
}

function errorOf(failedReason: string): DeadNotification['error'] {
  const coded = CODED.exec(failedReason);
  if (!coded) return { code: undefined, message: failedReason };
  const text = coded[2]!;
  const at = text.lastIndexOf(REASON);
  if (at === -1) return { code: coded[1], message: text };
  return { code: coded[1], message: text.slice(0, at), reason: text.slice(at + REASON.length) };
}

/** A failed job as a dead notification. */
export function deadOf(job: Job<StoredJob>): DeadNotification {
  const queued = queuedOf(job.data);
  return {
    // The key names the job as it does on every engine; the job id only when there is none.
    id: queued.key ?? job.id!,
    job: queued,
    error: errorOf(job.failedReason ?? ''),
    attempts: job.attemptsMade,
    queuedAt: new Date(job.timestamp),
    failedAt: new Date(job.finishedOn ?? job.timestamp),
  };
}

/** A job queued and not running as a waiting notification. */
export function waitingOf(job: Job<StoredJob>): WaitingNotification {
  const queued = queuedOf(job.data);
  return {
    id: queued.key ?? job.id!,
    job: queued,
    attempts: job.attemptsMade,
    queuedAt: new Date(job.timestamp),
  };
}
