import diagnostics_channel from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { asyncMemoryStore, formBody, post, purchase, SECRET, setup } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { parseNotification } from '../notification/parse.js';
import type { DedupeStore } from '../stores/contract.js';
import { MemoryStore } from '../stores/memory.js';
import { deliveryMessage } from './channels.js';
import { type DeliveryMessage, PAYHOOK_CHANNELS } from './messages.js';

type Event = [channel: string, event: string, message: Record<string, unknown>];

/** Subscribes to every payhook channel and records each event with a copy of its message as it was then. */
function record(): { events: Event[]; stop: () => void } {
  const events: Event[] = [];
  const copy = (message: unknown) => ({ ...(message as Record<string, unknown>) });
  const stops: (() => void)[] = [];
  for (const name of ['delivery', 'handler', 'store'] as const) {
    const tracing = diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS[name]);
    const subscriber = {
      start: (m: unknown) => events.push([name, 'start', copy(m)]),
      end: (m: unknown) => events.push([name, 'end', copy(m)]),
      asyncStart: (m: unknown) => events.push([name, 'asyncStart', copy(m)]),
      asyncEnd: (m: unknown) => events.push([name, 'asyncEnd', copy(m)]),
      error: (m: unknown) => events.push([name, 'error', copy(m)]),
    };
    tracing.subscribe(subscriber);
    stops.push(() => tracing.unsubscribe(subscriber));
  }
  const onRefusal = (m: unknown) => events.push(['refusal', 'publish', copy(m)]);
  diagnostics_channel.subscribe(PAYHOOK_CHANNELS.refusal, onRefusal);
  stops.push(() => diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.refusal, onRefusal));
  return {
    events,
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

const KEY = '8f3f5a0e-1d2c-4b5a-9e8f-7a6b5c4d3e2f:purchase:success:1000';

let recording: ReturnType<typeof record> | undefined;
afterEach(() => {
  recording?.stop();
  recording = undefined;
});

describe('diagnostics channels', () => {
  it('builds no message while nobody subscribes', () => {
    expect(deliveryMessage('request')).toBeUndefined();
  });

  it('traces a handled delivery: the delivery, its claim, its handler and its commit, in order', async () => {
    recording = record();
    const { handler } = setup();
    const result = await handler(post(formBody(purchase())), undefined);
    expect(result.outcome).toBe('handled');
    expect(recording.events.map(([channel, event]) => `${channel}:${event}`)).toEqual([
      'delivery:start',
      'store:start',
      'store:end',
      'handler:start',
      'handler:end',
      'store:start',
      'store:end',
      'delivery:end',
      'delivery:asyncStart',
      'delivery:asyncEnd',
    ]);
    const [, , done] = recording.events.at(-1)!;
    expect(done).toEqual({
      via: 'request',
      event: 'purchase.success',
      outcome: 'handled',
      key: KEY,
      secretIndex: 0,
      secretId: undefined,
      handlerCount: 1,
      errorCode: undefined,
      status: 200,
    });
    const stores = recording.events.filter(([channel, event]) => channel === 'store' && event === 'end');
    expect(stores.map(([, , m]) => [m.step, m.store, m.settled, m.errorCode])).toEqual([
      ['claim', 'memory', true, undefined],
      ['commit', 'memory', true, undefined],
    ]);
    const [, , run] = recording.events.find(([channel]) => channel === 'handler')!;
    expect(run).toMatchObject({ handler: '*#handle', key: KEY, settled: false, errorCode: undefined });
    expect((run.delivery as DeliveryMessage).via).toBe('request');
  });

  it('links an asynchronous handler and store to their delivery, and ends them when they settle', async () => {
    recording = record();
    const store = asyncMemoryStore();
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, store }).on(
      'purchase.success',
      async function fulfil() {},
    );
    await webhook(post(formBody(purchase())), undefined);
    const ended = recording.events.filter(
      ([channel, event]) => channel !== 'delivery' && event === 'asyncEnd',
    );
    expect(ended.map(([channel, , m]) => `${channel}:${m.step ?? m.handler}`)).toEqual([
      'store:claim',
      'handler:purchase.success#fulfil',
      'store:commit',
    ]);
    for (const [, , m] of ended) expect((m.delivery as DeliveryMessage).key).toBe(KEY);
  });

  it('publishes a refusal on the refusal channel and as the delivery error, without the request', async () => {
    recording = record();
    const { handler } = setup();
    const result = await handler(post(formBody(purchase(), 'another-secret')), undefined);
    expect(result.status).toBe(401);
    expect(recording.events.map(([channel, event]) => `${channel}:${event}`)).toEqual([
      'delivery:start',
      'refusal:publish',
      'delivery:end',
      'delivery:error',
      'delivery:asyncStart',
      'delivery:asyncEnd',
    ]);
    expect(recording.events[1]![2]).toEqual({ via: 'request', code: 'signature.invalid', status: 401 });
    expect(recording.events.at(-1)![2]).toMatchObject({
      outcome: 'refused',
      errorCode: 'signature.invalid',
      status: 401,
      event: undefined,
      key: undefined,
      handlerCount: 0,
    });
  });

  it('marks a handler that threw and a store call that rejected with their codes, not what they threw', async () => {
    recording = record();
    const failing: DedupeStore = {
      name: 'down',
      claim: () => Promise.reject(new Error('ECONNREFUSED customer@example.com')),
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    const down = createWebhookHandler({ secret: SECRET, logger: false, store: failing, handle: () => {} });
    expect((await down(post(formBody(purchase())), undefined)).status).toBe(503);
    const throwing = createWebhookHandler({
      secret: SECRET,
      logger: false,
      handle: () => {
        throw new Error('card 4444555566661111 declined');
      },
    });
    expect((await throwing(post(formBody(purchase())), undefined)).status).toBe(500);
    const errors = recording.events.filter(([, event]) => event === 'error').map(([, , m]) => m);
    expect(errors.map((m) => m.errorCode)).toEqual([
      'store.unavailable',
      'store.unavailable',
      'handler.failed',
      'handler.failed',
    ]);
    const published = JSON.stringify(recording.events, (key, value) =>
      key === 'delivery' ? undefined : value,
    );
    expect(published).not.toContain('customer@example.com');
    expect(published).not.toContain('4444555566661111');
  });

  it('traces process() as a delivery via process, with the status the same outcome would answer', async () => {
    recording = record();
    const { handler } = setup();
    const notification = parseNotification(purchase());
    expect(await handler.process(notification)).toBe('handled');
    expect(await handler.process(notification)).toBe('duplicate');
    const done = recording.events.filter(
      ([channel, event]) => channel === 'delivery' && event === 'asyncEnd',
    );
    expect(done.map(([, , m]) => [m.via, m.outcome, m.status, m.secretIndex])).toEqual([
      ['process', 'handled', 200, -1],
      ['process', 'duplicate', 200, -1],
    ]);
  });

  it('publishes a refusal of process() with its code, and process still rejects with it', async () => {
    recording = record();
    const handler = createWebhookHandler({
      secret: SECRET,
      logger: false,
      store: {
        ...new MemoryStore(),
        name: 'down',
        claim: () => Promise.reject(new Error('down')),
        renew: () => true,
        commit: () => true,
        release: () => undefined,
      },
      handle: () => {},
    });
    await expect(handler.process(parseNotification(purchase()))).rejects.toMatchObject({
      code: 'store.unavailable',
    });
    const done = recording.events.find(([channel, event]) => channel === 'delivery' && event === 'asyncEnd')!;
    expect(done[2]).toMatchObject({
      via: 'process',
      outcome: 'refused',
      errorCode: 'store.unavailable',
      status: 503,
    });
    expect(recording.events.filter(([channel]) => channel === 'refusal').map(([, , m]) => m)).toEqual([
      { via: 'process', code: 'store.unavailable', status: 503 },
    ]);
  });
});
