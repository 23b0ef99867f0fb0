import { createHash } from 'node:crypto';
import { RelayError } from '../errors.js';
import type { RelayEvent } from '../wire.js';
import { type Backoff, delayFor, pause } from './backoff.js';
import { type Cursor, type CursorStore, memoryCursor } from './cursor.js';
import { type AppAnswer, bodyOf, forward } from './forward.js';
import { createPoster, type Poster } from './post.js';
import { readSse } from './sse.js';

/**
 * What `connectRelay` tells as it goes: each answer of the app, each retry, a gap retention left, heartbeats and
 * reconnections. `lastDeliveryAgoMs` is how long since the app last answered a delivery (undefined before any).
 *
 * @example
 * onReport: (report) => { if (report.type === 'delivered') console.log(report.sequence, report.answer.status) }
 */
export type ConnectReport =
  | { type: 'connected'; after: number }
  | { type: 'delivered'; sequence: number; answer: AppAnswer }
  | { type: 'refused'; sequence: number; answer: AppAnswer }
  | { type: 'retrying'; sequence: number; answer: AppAnswer; attempt: number; waitMs: number }
  | { type: 'gap'; after: number; oldest: number; missed: number }
  | { type: 'heartbeat'; last: number; lastDeliveryAgoMs: number | undefined }
  | {
      type: 'disconnected';
      reason: string;
      failures: number;
      waitMs: number;
      lastDeliveryAgoMs: number | undefined;
    };

/**
 * Options of {@link connectRelay}.
 *
 * @example
 * const options: ConnectOptions = { url, token, forwardTo: 'http://localhost:3000/webhooks', cursor: fileCursor(path) };
 */
export interface ConnectOptions {
  /** The channel's URL on the relay: `https://relay.example.com/out/alice`. */
  url: string;
  /** The channel's token. */
  token: string;
  /** The app's webhook endpoint, given each delivery's body unchanged and its `X-Payhook-Relay` header. */
  forwardTo: string;
  /** Where the place in the channel is kept. @default memoryCursor() */
  cursor?: CursorStore;
  /** SSE, or long-polling for networks that cut open streams. @default 'sse' */
  transport?: 'sse' | 'long-poll';
  /**
   * Connection attempts that fail in a row before `connectRelay` rejects with `relay.unreachable`.
   * @default 10
   */
  maxReconnects?: number;
  /** Delays between connection attempts. @default { initialMs: 500, maxMs: 10_000 } */
  reconnect?: Backoff;
  /** Delays between tries of a delivery the app did not take. @default { initialMs: 250, maxMs: 30_000 } */
  retry?: Backoff;
  /**
   * A stream silent this long (no delivery, no heartbeat) is taken for dead and opened again.
   * @default 45_000
   */
  heartbeatTimeoutMs?: number;
  onReport?: (report: ConnectReport) => void;
  /** Stops the client: the delivery in progress finishes and its cursor is saved first. */
  signal?: AbortSignal;
  /** What reads the relay. (The app is posted to with node:http or node:https.) @default globalThis.fetch */
  fetch?: typeof fetch;
}

interface State {
  readonly options: ConnectOptions;
  readonly fetch: typeof fetch;
  readonly url: string;
  readonly store: CursorStore;
  readonly poster: Poster;
  cursor: Cursor;
  opened: boolean;
}

/** 401, 403 and 404 from the relay will not change by asking again. */
function refusedBy(response: Response): RelayError | undefined {
  if (response.status !== 401 && response.status !== 403 && response.status !== 404) return undefined;
  return new RelayError(
    'relay.refused',
    `the relay answered ${response.status}: ${response.status === 404 ? 'check the channel URL' : "check the channel's token"}.`,
  );
}

function agoMs(state: State): number | undefined {
  return state.cursor.deliveredAt === undefined ? undefined : Date.now() - state.cursor.deliveredAt;
}

/** Forwards one delivery unless the cursor is past it, then moves the cursor; false when stopped first. */
async function deliver(state: State, event: RelayEvent): Promise<boolean> {
  if (event.sequence <= state.cursor.sequence) return true;
  // node:crypto, not the relay's Web Crypto: synchronous, and this runs once per delivery of a catch-up.
  if (createHash('sha256').update(bodyOf(event)).digest('base64url') !== event.sha256) {
    throw new Error(`delivery ${event.sequence} arrived damaged (its SHA-256 differs); reading it again`);
  }
  const report = state.options.onReport;
  const answer = await forward(event, state.poster, {
    retry: state.options.retry,
    signal: state.options.signal,
    onRetry: (answer, attempt, waitMs) =>
      report?.({ type: 'retrying', sequence: event.sequence, answer, attempt, waitMs }),
  });
  if (!answer) return false;
  const ok = answer.status >= 200 && answer.status < 300;
  report?.({ type: ok ? 'delivered' : 'refused', sequence: event.sequence, answer });
  state.cursor = { url: state.url, sequence: event.sequence, deliveredAt: Date.now() };
  await state.store.save(state.cursor);
  return true;
}

function authorized(state: State, extra?: Record<string, string>): Record<string, string> {
  return { authorization: `Bearer ${state.options.token}`, ...extra };
}

/** One SSE connection, until it ends, fails, goes silent or the client stops. */
async function streamOnce(state: State): Promise<void> {
  const { signal, heartbeatTimeoutMs = 45_000 } = state.options;
  const connection = new AbortController();
  const stop = () => connection.abort();
  signal?.addEventListener('abort', stop, { once: true });
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const watch = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(stop, heartbeatTimeoutMs);
  };
  try {
    watch();
    const response = await state.fetch(state.url, {
      headers: authorized(state, {
        accept: 'text/event-stream',
        'last-event-id': String(state.cursor.sequence),
      }),
      signal: connection.signal,
    });
    const refusal = refusedBy(response);
    if (refusal) throw refusal;
    if (response.status !== 200 || !response.body) throw new Error(`the relay answered ${response.status}`);
    state.opened = true;
    state.options.onReport?.({ type: 'connected', after: state.cursor.sequence });
    for await (const message of readSse(response.body)) {
      clearTimeout(watchdog);
      if (!(await handle(state, message.event, message.data))) return;
      watch();
    }
  } finally {
    clearTimeout(watchdog);
    signal?.removeEventListener('abort', stop);
  }
}

/** One message of the relay's; false when the client stopped during a delivery. */
async function handle(state: State, event: string, data: string): Promise<boolean> {
  const report = state.options.onReport;
  if (event === 'delivery') return deliver(state, JSON.parse(data) as RelayEvent);
  if (event === 'gap')
    report?.({ type: 'gap', ...(JSON.parse(data) as { after: number; oldest: number; missed: number }) });
  if (event === 'heartbeat') {
    report?.({
      type: 'heartbeat',
      last: (JSON.parse(data) as { last: number }).last,
      lastDeliveryAgoMs: agoMs(state),
    });
  }
  return true;
}

/** Long-polls the channel until a request fails or the client stops. */
async function pollOnce(state: State): Promise<void> {
  const { signal } = state.options;
  while (!signal?.aborted) {
    const url = new URL(`${state.url}/events`);
    url.searchParams.set('after', String(state.cursor.sequence));
    url.searchParams.set('wait', '25');
    // The relay answers a long-poll within 25 s: a request silent for 45 s went into a black hole.
    const timeout = AbortSignal.timeout(45_000);
    const response = await state.fetch(url, {
      headers: authorized(state),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const refusal = refusedBy(response);
    if (refusal) throw refusal;
    if (response.status !== 200) throw new Error(`the relay answered ${response.status}`);
    const answer = (await response.json()) as {
      events: RelayEvent[];
      last: number;
      gap?: { after: number; oldest: number; missed: number };
    };
    if (!state.opened) state.options.onReport?.({ type: 'connected', after: state.cursor.sequence });
    state.opened = true;
    if (answer.gap) state.options.onReport?.({ type: 'gap', ...answer.gap });
    for (const event of answer.events) if (!(await deliver(state, event))) return;
    if (answer.gap && answer.events.length === 0) {
      state.cursor = { ...state.cursor, sequence: answer.gap.oldest - 1 };
    }
  }
}

/** A failure in a few words: the network error's code (`ECONNREFUSED`) rather than fetch's "fetch failed". */
function reasonOf(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error && error.name === 'AbortError') return 'no heartbeat in time';
  return error instanceof Error ? error.message : String(error);
}

async function openState(options: ConnectOptions): Promise<State> {
  const url = options.url.replace(/\/+$/, '');
  const store = options.cursor ?? memoryCursor();
  const saved = await store.load();
  if (saved && saved.url !== url) {
    throw new Error(
      `[@payhook/relay] the cursor file belongs to ${saved.url}, not ${url}: give another cursor file.`,
    );
  }
  const cursor = saved ?? { url, sequence: 0, deliveredAt: undefined };
  const poster = createPoster(options.forwardTo);
  return { options, fetch: options.fetch ?? globalThis.fetch, url, store, poster, cursor, opened: false };
}

/**
 * Reads a channel from the relay and forwards each delivery to the app, in order, from the cursor on: a restart
 * continues after the last delivery the app answered, so what arrived while the client was stopped comes next and
 * nothing comes twice. Reconnects with backoff; resolves when `signal` aborts, rejects with `relay.refused` on a
 * 401/403/404 and with `relay.unreachable` after `maxReconnects` failed attempts in a row.
 *
 * @example
 * import { connectRelay, fileCursor } from '@payhook/relay/client';
 * await connectRelay({
 *   url: 'https://relay.example.com/out/alice',
 *   token: process.env.PAYHOOK_RELAY_TOKEN!,
 *   forwardTo: 'http://localhost:3000/webhooks',
 *   cursor: fileCursor('.payhook/relay-alice.json'),
 *   onReport: (report) => console.log(report),
 * });
 */
export async function connectRelay(options: ConnectOptions): Promise<void> {
  const state = await openState(options);
  try {
    await run(state);
  } finally {
    state.poster.close();
    await state.store.close?.();
  }
}

/** Connects, forwards and reconnects until stopped, refused, or out of attempts. */
async function run(state: State): Promise<void> {
  const { options } = state;
  const maxReconnects = options.maxReconnects ?? 10;
  const reconnect = options.reconnect ?? { initialMs: 500, maxMs: 10_000 };
  let failures = 0;
  while (!options.signal?.aborted) {
    state.opened = false;
    let reason = 'the relay ended the stream';
    try {
      await (options.transport === 'long-poll' ? pollOnce(state) : streamOnce(state));
    } catch (error) {
      if (error instanceof RelayError && error.code === 'relay.refused') throw error;
      reason = reasonOf(error);
    }
    if (options.signal?.aborted) return;
    failures = state.opened ? 1 : failures + 1;
    if (!state.opened && failures >= maxReconnects) {
      throw new RelayError(
        'relay.unreachable',
        `no connection to the relay after ${failures} attempts in a row (${reason}).`,
      );
    }
    const waitMs = delayFor(reconnect, failures);
    options.onReport?.({ type: 'disconnected', reason, failures, waitMs, lastDeliveryAgoMs: agoMs(state) });
    await pause(waitMs, options.signal);
  }
}
