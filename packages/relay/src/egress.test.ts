import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  channel,
  deliver,
  delivery,
  digest,
  ORIGIN,
  poll,
  relayOver,
  TIMERS,
  untilTimerSet,
  within,
} from '../test/kit.js';
import { readSse, type SseMessage } from './client/sse.js';
import { verifyRelayHeader } from './forward-header.js';
import { MemoryJournal } from './journal/memory.js';
import type { Relay } from './relay.js';
import type { RelayEvent } from './wire.js';

/** Opens the SSE stream of a channel; `next(n)` reads the next n messages, `close()` cancels it. */
async function open(relay: Relay, name: string, token: string, headers: Record<string, string> = {}) {
  const stop = new AbortController();
  const response = await relay.fetch(
    new Request(`${ORIGIN}/out/${name}`, {
      headers: { authorization: `Bearer ${token}`, ...headers },
      signal: stop.signal,
    }),
  );
  const messages = readSse(response.body!);
  return {
    response,
    async next(count: number): Promise<SseMessage[]> {
      const read: SseMessage[] = [];
      while (read.length < count) {
        const { value, done } = await messages.next();
        if (done) break;
        read.push(value);
      }
      return read;
    },
    async close() {
      stop.abort();
      await messages.return(undefined);
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('GET /out/<channel> (SSE)', () => {
  it('streams deliveries in order with id = sequence, then each new one as it is journaled', async () => {
    // The stream's poll and heartbeat are timers, faked and never advanced: only the append's wake-up brings #3.
    vi.useFakeTimers({ toFake: [...TIMERS] });
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    await deliver(relay, 'alice', delivery(1));
    await deliver(relay, 'alice', delivery(2));
    const stream = await open(relay, 'alice', token);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const first = await stream.next(2);
    expect(first.map((m) => [m.event, m.id])).toEqual([
      ['delivery', '1'],
      ['delivery', '2'],
    ]);
    await deliver(relay, 'alice', delivery(3));
    const [third] = await within(stream.next(1));
    expect((JSON.parse(third!.data) as RelayEvent).sha256).toBe(digest(delivery(3)));
    await stream.close();
  });

  it('resumes after Last-Event-ID: nothing at or before it is sent again', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    for (let n = 1; n <= 5; n++) await deliver(relay, 'alice', delivery(n));
    const stream = await open(relay, 'alice', token, { 'last-event-id': '3' });
    expect((await stream.next(2)).map((m) => m.id)).toEqual(['4', '5']);
    await stream.close();
    const refused = await relay.fetch(
      new Request(`${ORIGIN}/out/alice`, {
        headers: { authorization: `Bearer ${token}`, 'last-event-id': 'x' },
      }),
    );
    expect(refused.status).toBe(400);
  });

  it('sends a heartbeat with the last sequence when idle', async () => {
    const relay = relayOver(new MemoryJournal(), { heartbeatMs: 50, pollMs: 10 });
    const { token } = await channel(relay, 'alice');
    await deliver(relay, 'alice', delivery(1));
    const stream = await open(relay, 'alice', token);
    const [, heartbeat] = await stream.next(2);
    expect(heartbeat!.event).toBe('heartbeat');
    expect(JSON.parse(heartbeat!.data)).toMatchObject({ last: 1 });
    await stream.close();
  });

  it('tells a client behind retention how many deliveries it missed, then streams the oldest kept', async () => {
    const relay = relayOver(new MemoryJournal({ retention: { maxEvents: 2 } }));
    const { token } = await channel(relay, 'alice');
    for (let n = 1; n <= 5; n++) await deliver(relay, 'alice', delivery(n));
    const stream = await open(relay, 'alice', token, { 'last-event-id': '1' });
    const [gap, first] = await stream.next(2);
    expect(gap!.event).toBe('gap');
    expect(JSON.parse(gap!.data)).toEqual({ after: 1, oldest: 4, missed: 2 });
    expect(first!.id).toBe('4');
    await stream.close();
  });

  it('signs each delivery with the channel key: verifyRelayHeader accepts it with the bytes received', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token, key } = await channel(relay, 'alice');
    await deliver(relay, 'alice', delivery(1), '35.187.74.148');
    const stream = await open(relay, 'alice', token);
    const [message] = await stream.next(1);
    await stream.close();
    const event = JSON.parse(message!.data) as RelayEvent;
    const forward = await verifyRelayHeader(event.header, delivery(1), key);
    expect(forward).toMatchObject({
      channel: 'alice',
      sequence: 1,
      sender: '35.187.74.148',
      sha256: digest(delivery(1)),
    });
    expect(forward.receivedAt.toISOString()).toBe(event.receivedAt);
  });
});

describe('GET /out/<channel>/events (long-poll)', () => {
  it('holds an empty read until a delivery arrives, up to ?wait seconds', async () => {
    // The wait and the poll are timers, faked and never advanced: the read is held, and only the append answers it.
    vi.useFakeTimers({ toFake: [...TIMERS] });
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    const waiting = poll(relay, 'alice', token, 'after=0&wait=5');
    await expect(within(waiting)).rejects.toThrow('not settled within');
    await deliver(relay, 'alice', delivery(1));
    const answer = (await (await within(waiting)).json()) as { events: RelayEvent[]; last: number };
    expect(answer.events.map((e) => e.sequence)).toEqual([1]);
    expect(answer.last).toBe(1);
  });

  it('answers an empty read once ?wait seconds passed with nothing', async () => {
    // The clock too: the wait's deadline is a time, counted on the clock the timers advance.
    vi.useFakeTimers({ toFake: [...TIMERS, 'Date'] });
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    expect(vi.getTimerCount()).toBe(0);
    const waiting = poll(relay, 'alice', token, 'after=0&wait=5');
    await untilTimerSet(); // the read reached its wait
    await expect(within(waiting)).rejects.toThrow('not settled');
    await vi.advanceTimersByTimeAsync(4_990);
    await expect(within(waiting)).rejects.toThrow('not settled');
    await vi.advanceTimersByTimeAsync(10);
    const answer = (await (await within(waiting)).json()) as { events: RelayEvent[]; last: number };
    expect([answer.events, answer.last]).toEqual([[], 0]);
  });

  it('answers at once with the events after the cursor, at most ?limit', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    for (let n = 1; n <= 4; n++) await deliver(relay, 'alice', delivery(n));
    const answer = (await (await poll(relay, 'alice', token, 'after=1&limit=2')).json()) as {
      events: RelayEvent[];
      last: number;
      oldest: number;
    };
    expect(answer.events.map((e) => e.sequence)).toEqual([2, 3]);
    expect([answer.last, answer.oldest]).toEqual([4, 1]);
  });

  it('answers the status: last, oldest, retained and when the last arrived', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    const empty = await relay.fetch(
      new Request(`${ORIGIN}/out/alice/status`, { headers: { authorization: `Bearer ${token}` } }),
    );
    expect(await empty.json()).toEqual({
      channel: 'alice',
      last: 0,
      oldest: 1,
      retained: 0,
      lastReceivedAt: null,
    });
    await deliver(relay, 'alice', delivery(1));
    const status = await relay.fetch(
      new Request(`${ORIGIN}/out/alice/status`, { headers: { authorization: `Bearer ${token}` } }),
    );
    const body = (await status.json()) as { last: number; retained: number; lastReceivedAt: string };
    expect([body.last, body.retained]).toEqual([1, 1]);
    expect(Date.now() - Date.parse(body.lastReceivedAt)).toBeLessThan(5_000);
  });
});
