import { HandlerError, type WebhookError, WebhookError as WebhookErrorClass } from '../errors.js';
import type { Notification } from '../notification/types.js';

/**
 * How the request ended. `stale` and `conflict` (with the `ledger` option): recorded, earlier in the payment's cycle
 * than what the ledger holds, or contradicting it (a failure after a success); no handler ran. `refused` always carries `error`; `queued`: handed to the `queue` option, whose workers run
 * the handlers (a delivery only: `process` runs them); `handled+queued`: with `queue`, the handlers registered
 * `{ inline: true }` ran and committed in the request, and the others were then handed to the queue.
 */
export type WebhookOutcome =
  | 'handled'
  | 'handled+queued'
  | 'queued'
  | 'duplicate'
  | 'stale'
  | 'conflict'
  | 'ignored'
  | 'refused';

/** What to answer: a status, headers and a short JSON body, plus what happened, for adapters and logs. */
export interface WebhookResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  outcome: WebhookOutcome;
  error?: WebhookError;
  /** The decoded notification: on every 200, and on a refusal that came after the signature was verified. */
  notification?: Notification;
  /**
   * The sender's address as the handler read it: for `allowedSenders` (the socket's, or `X-Forwarded-For`'s under
   * `trustProxy`) or, with `relay`, the original sender a valid relay header names. Absent when neither option is
   * set, or when the request was refused before it was read.
   */
  sender?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const BODIES = {
  handled: '{"ok":true,"outcome":"handled"}',
  'handled+queued': '{"ok":true,"outcome":"handled+queued"}',
  queued: '{"ok":true,"outcome":"queued"}',
  duplicate: '{"ok":true,"outcome":"duplicate"}',
  stale: '{"ok":true,"outcome":"stale"}',
  conflict: '{"ok":true,"outcome":"conflict"}',
  ignored: '{"ok":true,"outcome":"ignored"}',
} as const;

/** The 200 answer of a delivery that was handled or queued, or needed no handling (duplicate, stale, ignored). */
export function accepted(
  outcome: Exclude<WebhookOutcome, 'refused'>,
  notification: Notification,
  sender?: string,
): WebhookResult {
  const result: WebhookResult = {
    status: 200,
    headers: { 'content-type': JSON_TYPE },
    body: BODIES[outcome],
    outcome,
    notification,
  };
  if (sender !== undefined) result.sender = sender;
  return result;
}

/**
 * The answer for a refusal: status from the error, a short JSON reason, and hints for the client; with the
 * notification when it was refused after its signature was verified (a handler failure, a store outage).
 */
export function refusal(error: WebhookError, notification?: Notification, sender?: string): WebhookResult {
  return {
    status: error.status,
    headers: { 'content-type': JSON_TYPE, ...error.headers },
    body: JSON.stringify({ ok: false, error: error.toJSON() }),
    outcome: 'refused',
    error,
    ...(notification ? { notification } : {}),
    ...(sender === undefined ? {} : { sender }),
  };
}

/** Any error as a `WebhookError`: one payhook threw as it is, anything else as an unexpected failure (500). */
export function asWebhookError(error: unknown): WebhookError {
  if (error instanceof WebhookErrorClass) return error;
  return new HandlerError('handler.failed', 'an unexpected error stopped the webhook handler.', {
    cause: error,
  });
}

/** The result as a Fetch API `Response`. */
export function toResponse(result: WebhookResult): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}
