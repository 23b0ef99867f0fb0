import { decodeBase64Url } from '@payhook/core/adapter';
import { RELAY_HEADER } from '../forward-header.js';
import type { RelayEvent } from '../wire.js';
import { type Backoff, delayFor, pause } from './backoff.js';
import type { Poster } from './post.js';

/**
 * The app's answer to one forwarded delivery: its status, core's `outcome` when the body names one, and how long
 * it took. `status` 0 when the request failed (the app is down).
 *
 * @example
 * const answer: AppAnswer = { status: 200, outcome: 'duplicate', ms: 3, error: undefined };
 */
export interface AppAnswer {
  readonly status: number;
  readonly outcome: string | undefined;
  readonly ms: number;
  /** Why the request failed, when it did (`ECONNREFUSED`). */
  readonly error: string | undefined;
}

/** Statuses worth asking again: the app may answer otherwise later. Every other 4xx is the app's last word. */
function retryable(status: number): boolean {
  return (
    status === 0 || status === 408 || status === 409 || status === 425 || status === 429 || status >= 500
  );
}

/** The bytes the relay journaled, exactly. */
export function bodyOf(event: RelayEvent): Uint8Array {
  const body = decodeBase64Url(event.body);
  if (!body) throw new Error(`[@payhook/relay] delivery ${event.sequence} has a body that is not base64url.`);
  return body;
}

function causeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : 'error';
}

/** Posts one delivery to the app once: the body as journaled, its media type and the signed relay header. */
export async function postOnce(event: RelayEvent, poster: Poster): Promise<AppAnswer> {
  const started = performance.now();
  const headers: Record<string, string> = { [RELAY_HEADER]: event.header };
  if (event.mediaType) headers['content-type'] = event.mediaType;
  try {
    const { status, text } = await poster.post(bodyOf(event), headers);
    const outcome = /"outcome"\s*:\s*"([a-z+_]{1,40})"/.exec(text)?.[1];
    return { status, outcome, ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { status: 0, outcome: undefined, ms: performance.now() - started, error: causeOf(error) };
  }
}

/** What `forward` reports about each try that will be tried again. */
export type RetryReport = (answer: AppAnswer, attempt: number, waitMs: number) => void;

/**
 * Forwards one delivery until the app answers it for good: a 2xx, or a 4xx other than 408, 409, 425 and 429.
 * Failures, 5xx and those four are tried again with backoff, the app's order kept: nothing after it is sent
 * meanwhile. Resolves undefined when `signal` aborted first (a post in progress is let finish).
 */
export async function forward(
  event: RelayEvent,
  poster: Poster,
  options: {
    retry?: Backoff | undefined;
    signal?: AbortSignal | undefined;
    onRetry?: RetryReport;
  },
): Promise<AppAnswer | undefined> {
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) return undefined;
    const answer = await postOnce(event, poster);
    if (!retryable(answer.status)) return answer;
    const waitMs = delayFor(options.retry, attempt);
    options.onRetry?.(answer, attempt, waitMs);
    await pause(waitMs, options.signal);
  }
}
