import { createHash } from 'node:crypto';
import type { QueuedNotification } from '@payhook/core';
import { type DeadNotification, reasonOf, type WaitingNotification } from './engine.js';

// How a notification becomes a pg-boss job and back: its id, its data, the error its failed attempt keeps.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The longest error message a dead job keeps: enough to diagnose, never a whole payload echoed by a handler. */
const MESSAGE_LIMIT = 500;

/**
 * The job id of a notification key: pg-boss ids are UUIDs, so the key is hashed into a name-based one (SHA-256,
 * UUID version 8 as RFC 9562 suggests for it). The same key always gives the same id, which the job table's
 * primary key then refuses twice.
 */
export function jobIdOf(key: string): string {
  const bytes = createHash('sha256').update(`payhook-queue\0${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The job ids a dead job may be named by: its notification key (as `dead()` reports it) or its UUID. */
export function jobIdsOf(ids: readonly string[]): string[] {
  return [...new Set(ids.flatMap((id) => (UUID.test(id) ? [jobIdOf(id), id.toLowerCase()] : [jobIdOf(id)])))];
}

/** A job's data as stored: the queued notification itself, key included, so a dead job tells whose it was. */
export function readJob(data: unknown): QueuedNotification {
  const job = (data ?? {}) as Partial<Record<keyof QueuedNotification, unknown>>;
  return {
    key: typeof job.key === 'string' ? job.key : undefined,
    data: (job.data ?? {}) as Record<string, unknown>,
    secretIndex: typeof job.secretIndex === 'number' ? job.secretIndex : 0,
    ...(typeof job.secretId === 'string' ? { secretId: job.secretId } : {}),
  };
}

/**
 * What a failed attempt keeps of its error: the code, the message and the worker's opt-in reason, never a stack,
 * a cause or other fields.
 */
export interface JobError {
  code?: string;
  message: string;
  reason?: string;
}

export function errorOf(error: unknown): JobError {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const reason = reasonOf(error);
  return {
    ...(typeof code === 'string' ? { code } : {}),
    message: message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message,
    ...(reason === undefined ? {} : { reason }),
  };
}

/** A dead job's row, as the statements of `postgres-sql.ts` select it. */
export interface DeadRow {
  id: string;
  data: unknown;
  output: unknown;
  retry_count: number;
  created_on: Date;
  completed_on: Date;
}

export function deadNotificationOf(row: DeadRow): DeadNotification {
  const job = readJob(row.data);
  // pg-boss's own stall expiry writes { value: { message } }; the consumer writes { code, message }.
  const output = (row.output ?? {}) as {
    code?: unknown;
    message?: unknown;
    reason?: unknown;
    value?: { message?: unknown };
  };
  const message = output.message ?? output.value?.message;
  return {
    id: job.key ?? row.id,
    job,
    error: {
      code: typeof output.code === 'string' ? output.code : undefined,
      message: typeof message === 'string' ? message : 'unknown error',
      ...(typeof output.reason === 'string' ? { reason: output.reason } : {}),
    },
    attempts: row.retry_count + 1,
    queuedAt: row.created_on,
    failedAt: row.completed_on,
  };
}

/** A waiting job's row, as `PostgresJobs.waiting` selects it. */
export interface WaitingRow {
  id: string;
  data: unknown;
  retry_count: number;
  created_on: Date;
  started_on: Date | null;
}

export function waitingNotificationOf(row: WaitingRow): WaitingNotification {
  const job = readJob(row.data);
  // pg-boss counts a retry's attempt once it starts: a job that never started has made none.
  const attempts = row.started_on === null ? 0 : row.retry_count;
  return { id: job.key ?? row.id, job, attempts, queuedAt: row.created_on };
}
