import { json } from './answers.js';
import { RelayError } from './errors.js';
import type { ChannelStats } from './journal/contract.js';
import type { ResolvedOptions } from './options.js';
import type { Wakeups } from './wakeups.js';
import type { EventSigner, RelayEvent } from './wire.js';

// `GET /out/<channel>` (SSE), `/out/<channel>/events` (long-poll) and `/out/<channel>/status`: a channel read
// from a cursor, in sequence order, each delivery with its signed header.

export interface EgressContext {
  readonly options: ResolvedOptions;
  readonly wakeups: Wakeups;
  readonly signer: EventSigner;
}

const BATCH = 100;
const encoder = new TextEncoder();

/** A cursor from `Last-Event-ID` or `?after=`: a sequence already received (0 for none). */
export function cursorOf(value: string | null): number {
  if (value === null || value === '') return 0;
  const cursor = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(cursor)) {
    throw new RelayError(
      'cursor.invalid',
      `the cursor must be a sequence number (0 or more), not ${JSON.stringify(value.slice(0, 40))}.`,
    );
  }
  return cursor;
}

function frame(event: string, data: unknown, id?: number): Uint8Array {
  const lines = id === undefined ? '' : `id: ${id}\n`;
  return encoder.encode(`${lines}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Tells a client whose cursor is older than the oldest retained delivery how many it will never see. */
function gapOf(
  after: number,
  stats: ChannelStats,
): { after: number; oldest: number; missed: number } | undefined {
  if (stats.oldest <= after + 1) return undefined;
  return { after, oldest: stats.oldest, missed: stats.oldest - after - 1 };
}

async function readWired(
  context: EgressContext,
  channel: string,
  after: number,
  limit: number,
): Promise<RelayEvent[]> {
  const events = await context.options.journal.read(channel, after, limit);
  return Promise.all(events.map((event) => context.signer.wire(channel, event)));
}

/**
 * The SSE stream of a channel after `after`: `delivery` events (id = sequence), a `gap` event when deliveries
 * were pruned before the client read them, and a `heartbeat` (with the last sequence) when idle.
 */
export function stream(
  context: EgressContext,
  channel: string,
  after: number,
  signal: AbortSignal,
): Response {
  const { options, wakeups } = context;
  const stop = new AbortController();
  const abort = () => stop.abort();
  signal.addEventListener('abort', abort, { once: true });
  let cursor = after;
  let idleSince = Date.now();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(encoder.encode(`retry: 1000\n\n`));
      const gap = gapOf(cursor, await options.journal.stats(channel));
      if (gap) {
        controller.enqueue(frame('gap', gap));
        cursor = gap.oldest - 1;
      }
    },
    async pull(controller) {
      while (!stop.signal.aborted) {
        const events = await readWired(context, channel, cursor, BATCH);
        if (events.length > 0) {
          for (const event of events) controller.enqueue(frame('delivery', event, event.sequence));
          cursor = events.at(-1)!.sequence;
          idleSince = Date.now();
          return;
        }
        const untilHeartbeat = idleSince + options.heartbeatMs - Date.now();
        if (untilHeartbeat <= 0) {
          const stats = await options.journal.stats(channel);
          controller.enqueue(frame('heartbeat', { last: stats.last, at: new Date().toISOString() }));
          idleSince = Date.now();
          return;
        }
        await wakeups.wait(channel, Math.min(options.pollMs, untilHeartbeat), stop.signal);
      }
    },
    cancel() {
      signal.removeEventListener('abort', abort);
      stop.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
}

/**
 * The long-poll: deliveries after `?after=` (up to `?limit=`, 100), held up to `?wait=` seconds (capped by
 * `longPollMaxMs`) while there are none. `{ events, last, oldest, gap? }`.
 */
export async function poll(
  context: EgressContext,
  channel: string,
  url: URL,
  signal: AbortSignal,
): Promise<Response> {
  const { options, wakeups } = context;
  const after = cursorOf(url.searchParams.get('after'));
  const limit = Math.min(BATCH, Math.max(1, Number(url.searchParams.get('limit')) || BATCH));
  const waitMs = Math.min(
    options.longPollMaxMs,
    Math.max(0, Number(url.searchParams.get('wait')) || 0) * 1_000,
  );
  const deadline = Date.now() + waitMs;
  let stats = await options.journal.stats(channel);
  const gap = gapOf(after, stats);
  const from = gap ? gap.oldest - 1 : after;
  let events = await readWired(context, channel, from, limit);
  while (events.length === 0 && Date.now() < deadline && !signal.aborted) {
    await wakeups.wait(channel, Math.min(options.pollMs, deadline - Date.now()), signal);
    events = await readWired(context, channel, from, limit);
  }
  if (events.length > 0) stats = await options.journal.stats(channel);
  return json(200, { events, last: stats.last, oldest: stats.oldest, ...(gap ? { gap } : {}) });
}

/** What the channel holds: `{ channel, last, oldest, retained, lastReceivedAt }`. */
export async function status(context: EgressContext, channel: string): Promise<Response> {
  const stats = await context.options.journal.stats(channel);
  return json(200, {
    channel,
    last: stats.last,
    oldest: stats.oldest,
    retained: stats.last - stats.oldest + 1,
    lastReceivedAt: stats.lastReceivedAt === undefined ? null : new Date(stats.lastReceivedAt).toISOString(),
  });
}
