import { decodeBase64Url } from '@payhook/core/adapter';
import { describe, expect, it, vi } from 'vitest';
import { encodeForm } from '../../../test/support/signed-form.ts';
import {
  channel,
  deliver,
  delivery,
  digest,
  FORM,
  poll,
  relayOver,
  SECRET,
  SERVICE,
  TIMERS,
  untilTimerSet,
  within,
} from '../test/kit.js';
import type { Journal } from './journal/contract.js';
import { MemoryJournal } from './journal/memory.js';
import type { RelayEvent } from './wire.js';

/** A memory journal whose appends do what `append` says instead. */
function journalWith(append: Journal['append']): Journal {
  const journal = new MemoryJournal();
  return Object.assign(Object.create(journal) as Journal, {
    createChannel: journal.createChannel.bind(journal),
    findChannel: journal.findChannel.bind(journal),
    findChannelByToken: journal.findChannelByToken.bind(journal),
    read: journal.read.bind(journal),
    stats: journal.stats.bind(journal),
    append,
  });
}

async function events(response: Response): Promise<RelayEvent[]> {
  return ((await response.json()) as { events: RelayEvent[] }).events;
}

describe('POST /in/<channel>', () => {
  it('answers 200 with the sequence once journaled, and the journal holds the exact bytes, media type and sender', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    const body = delivery(1);
    const answer = await deliver(relay, 'alice', body, SERVICE, { 'content-type': `${FORM}; charset=UTF-8` });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ ok: true, sequence: 1 });
    const [event] = await events(await poll(relay, 'alice', token));
    expect(event).toMatchObject({ sequence: 1, mediaType: `${FORM}; charset=UTF-8`, sender: SERVICE });
    const bytes = decodeBase64Url(event!.body)!;
    expect(Buffer.from(bytes).toString('utf8')).toBe(body);
    expect(event!.sha256).toBe(digest(body));
  });

  it('keeps bytes that are not UTF-8 and a body without Content-Type as they came', async () => {
    const relay = relayOver(new MemoryJournal());
    const { token } = await channel(relay, 'alice');
    const body = new Uint8Array([0xff, 0xfe, 0x00, 0x41, 0xc3, 0x28]);
    expect((await deliver(relay, 'alice', body, SERVICE, {})).status).toBe(200);
    const [event] = await events(await poll(relay, 'alice', token));
    expect([...decodeBase64Url(event!.body)!]).toEqual([...body]);
    expect(event!.mediaType).toBe('');
    expect(event!.sha256).toBe(digest(body));
  });

  it('answers 503 journal.unavailable when the write fails, and nothing is readable', async () => {
    const relay = relayOver(journalWith(async () => Promise.reject(new Error('disk gone'))));
    const { token } = await channel(relay, 'alice');
    const answer = await deliver(relay, 'alice', delivery(1));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('journal.unavailable');
    expect(await events(await poll(relay, 'alice', token))).toEqual([]);
  });

  it('answers 503 journal.timeout when the write stalls past writeTimeoutMs', async () => {
    let writing: () => void = () => {};
    const written = new Promise<void>((resolve) => {
      writing = resolve;
    });
    const relay = relayOver(
      journalWith(() => {
        writing();
        return new Promise(() => {});
      }),
      { writeTimeoutMs: 50 },
    );
    await channel(relay, 'alice');
    // The deadline is a timer, faked: once the write started, the answer waits for it (49 ms in, none), and comes
    // once it fired.
    vi.useFakeTimers({ toFake: [...TIMERS] });
    try {
      const answering = deliver(relay, 'alice', delivery(1));
      await within(written);
      await untilTimerSet();
      await vi.advanceTimersByTimeAsync(49);
      await expect(within(answering)).rejects.toThrow('not settled');
      await vi.advanceTimersByTimeAsync(1);
      const answer = await within(answering);
      expect(answer.status).toBe(503);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('journal.timeout');
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 404 channel.not_found for a channel never created, 405 to a GET', async () => {
    const relay = relayOver(new MemoryJournal());
    const missing = await deliver(relay, 'nobody', delivery(1));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('channel.not_found');
    await channel(relay, 'alice');
    const get = await relay.fetch(new Request('http://relay.test/in/alice'));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('answers 413 payload.too_large over maxBodyBytes, with or without Content-Length', async () => {
    const relay = relayOver(new MemoryJournal(), { maxBodyBytes: 100 });
    const { token } = await channel(relay, 'alice');
    expect((await deliver(relay, 'alice', 'x'.repeat(101))).status).toBe(413);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(60));
        controller.enqueue(new Uint8Array(60));
        controller.close();
      },
    });
    const streamed = await relayFetchStream(relay, chunks);
    expect(streamed.status).toBe(413);
    expect(await events(await poll(relay, 'alice', token))).toEqual([]);
  });

  it('refuses a sender outside allowedSenders with 403 and journals nothing', async () => {
    const relay = relayOver(new MemoryJournal(), { allowedSenders: [SERVICE] });
    const { token } = await channel(relay, 'alice');
    const refused = await deliver(relay, 'alice', delivery(1), '203.0.113.9');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('sender.forbidden');
    expect((await deliver(relay, 'alice', delivery(2), `::ffff:${SERVICE}`)).status).toBe(200);
    const sequences = (await events(await poll(relay, 'alice', token))).map((event) => event.sequence);
    expect(sequences).toEqual([1]);
  });

  it('reads the sender from X-Forwarded-For only under trustProxy', async () => {
    const relay = relayOver(new MemoryJournal(), { allowedSenders: [SERVICE], trustProxy: 1 });
    const { token } = await channel(relay, 'alice');
    const headers = { 'content-type': FORM, 'x-forwarded-for': `198.51.100.7, ${SERVICE}` };
    expect((await deliver(relay, 'alice', delivery(1), '10.0.0.2', headers)).status).toBe(200);
    const [event] = await events(await poll(relay, 'alice', token));
    expect(event!.sender).toBe(SERVICE);
    const spoofed = { 'content-type': FORM, 'x-forwarded-for': `${SERVICE}, 198.51.100.7` };
    expect((await deliver(relay, 'alice', delivery(2), '10.0.0.2', spoofed)).status).toBe(403);
  });

  it('with verifySignature, refuses a forgery with 401 signature.invalid and journals nothing', async () => {
    const relay = relayOver(new MemoryJournal(), { verifySignature: { secret: SECRET } });
    const { token } = await channel(relay, 'alice');
    const forged = await deliver(relay, 'alice', delivery(1, 'not-the-secret'));
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('signature.invalid');
    const unsigned = await deliver(relay, 'alice', encodeForm({ data: 'eyJhIjoxfQ==' }));
    expect(unsigned.status).toBe(401);
    expect((await deliver(relay, 'alice', delivery(2))).status).toBe(200);
    expect((await events(await poll(relay, 'alice', token))).map((event) => event.sequence)).toEqual([1]);
  });

  it('with verifySignature, journals a signed delivery whose data core would refuse (the app answers it)', async () => {
    const relay = relayOver(new MemoryJournal(), { verifySignature: { secret: SECRET } });
    await channel(relay, 'alice');
    const { signedData } = await import('../../../test/support/signed-form.ts');
    expect((await deliver(relay, 'alice', signedData('eyJhIjoxfQ==', SECRET))).status).toBe(200);
  });
});

function relayFetchStream(
  relay: ReturnType<typeof relayOver>,
  body: ReadableStream<Uint8Array>,
): Promise<Response> {
  const init = { method: 'POST', headers: { 'content-type': FORM }, body, duplex: 'half' };
  return relay.fetch(new Request('http://relay.test/in/alice', init as RequestInit), {
    remoteAddress: SERVICE,
  });
}
