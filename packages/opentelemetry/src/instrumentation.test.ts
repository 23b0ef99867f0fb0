import { PassThrough } from 'node:stream';
import { context, type SpanContext, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { MeterProvider, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createWebhookHandler,
  type DedupeStore,
  ERROR_STATUS,
  type WebhookHandler,
  type WebhookRequest,
} from '@payhook/core';
import { createPaymentLedger } from '@payhook/payments';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { encodeForm, envelope, signedData, signedForm } from '../../../test/support/signed-form.ts';
import { encodeBase64Url } from '../../core/src/runtime/bytes.ts';
import { asyncMemoryStore } from '../../core/test/fixtures.ts';
import { RELAY_KEY, relayHeader } from '../../core/test/relay.ts';
import { TestReader } from '../test/metrics.ts';
import { ATTRIBUTES, PayhookInstrumentation } from './index.js';

const SECRET = 'otel-live-secret-5d1e9c';
const OLD_SECRET = 'otel-old-secret-77ab01';
const CARD_TOKEN = 'tok_3f9a1c7e5b2d4680';
const EMAIL = 'olena.shevchenko@example.com';
const PHONE = '+380501234567';

let sequence = 0;
const notification = (fields: Record<string, unknown> = {}) =>
  purchase({
    payment_id: `pay-${++sequence}`,
    order_id: 'order-1',
    cc_token: CARD_TOKEN,
    cc_mask: '444455******1111',
    customer_email: EMAIL,
    customer_phone: PHONE,
    ...fields,
  });
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const post = (body: unknown, headers: Record<string, string> = FORM): WebhookRequest => ({
  method: 'POST',
  headers,
  body,
  remoteAddress: '127.0.0.1',
});

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const contextManager = new AsyncLocalStorageContextManager();
// Store spans on, so every tree below shows where a delivery reached in the store; the default is tested on its own.
const instrumentation = new PayhookInstrumentation({ enabled: false, storeSpans: true });

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  registerInstrumentations({ instrumentations: [instrumentation], tracerProvider, meterProvider });
});
afterAll(() => {
  instrumentation.disable();
  context.disable();
});
afterEach(() => {
  vi.useRealTimers();
});

/** The finished spans as a tree of names, each with its outcome or error, children under their parents. */
function tree(spans: readonly ReadableSpan[]): string[] {
  const id = (span: ReadableSpan) => span.spanContext().spanId;
  const parentOf = (span: ReadableSpan) =>
    (span as { parentSpanContext?: SpanContext }).parentSpanContext?.spanId;
  const label = (span: ReadableSpan) => {
    const tail = span.attributes[ATTRIBUTES.errorType] ?? span.attributes[ATTRIBUTES.outcome];
    return tail === undefined ? span.name : `${span.name} [${String(tail)}]`;
  };
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = spans.filter((span) => parentOf(span) === parent);
    for (const child of children.sort((a, b) => cmp(a.startTime, b.startTime))) {
      lines.push(`${'  '.repeat(depth)}${label(child)}`);
      walk(id(child), depth + 1);
    }
  };
  const ids = new Set(spans.map(id));
  const roots = spans.filter((span) => parentOf(span) === undefined || !ids.has(parentOf(span)!));
  for (const root of roots.sort((a, b) => cmp(a.startTime, b.startTime))) {
    lines.push(label(root));
    walk(id(root), 1);
  }
  return lines;
}
const cmp = (a: [number, number], b: [number, number]) => a[0] - b[0] || a[1] - b[1];

/** Drives the fake clock until `pending` settles (timers of a read, a claim wait, a handler's deadline). */
async function settled<T>(pending: Promise<T>): Promise<T> {
  if (!vi.isFakeTimers()) return pending;
  let done = false;
  const tracked = pending.finally(() => {
    done = true;
  });
  for (let i = 0; i < 1_000 && !done; i++) await vi.advanceTimersByTimeAsync(10);
  return tracked;
}

/** Every attribute value exported: spans, their events, and every metric data point's attributes. */
async function exported(spans: readonly ReadableSpan[]): Promise<string> {
  const { resourceMetrics } = await reader.collect();
  return JSON.stringify([
    spans.map((span) => [span.name, span.attributes, span.events, span.status]),
    metricAttributes(resourceMetrics),
  ]);
}
function metricAttributes(resourceMetrics: ResourceMetrics): unknown[] {
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.flatMap((metric) => [
      metric.descriptor.name,
      ...metric.dataPoints.map((point) => point.attributes),
    ]),
  );
}

/** Runs one delivery and answers its code (or outcome) and its span tree. */
async function deliver(
  handler: WebhookHandler,
  request: WebhookRequest,
): Promise<{ answer: string; tree: string[]; spans: ReadableSpan[] }> {
  exporter.reset();
  const result = await settled(handler(request, undefined));
  const spans = [...exporter.getFinishedSpans()];
  return { answer: result.error?.code ?? result.outcome, tree: tree(spans), spans };
}

const app = (n: { order_id: string }) => {
  if (n.order_id === 'boom') throw new Error(`card ${CARD_TOKEN} of ${EMAIL} was declined`);
};

describe('PayhookInstrumentation: one span tree per outcome', () => {
  const seen: ReadableSpan[] = [];

  it('handled: a process span with the claim, the handler and the commit as its children', async () => {
    const handler = createWebhookHandler({ secret: SECRET, logger: false }).on('purchase.success', app);
    const {
      answer,
      tree: spans,
      spans: raw,
    } = await deliver(handler, post(signedForm(notification(), SECRET)));
    seen.push(...raw);
    expect(answer).toBe('handled');
    expect(spans).toEqual([
      'process purchase.success [handled]',
      '  store claim',
      '  handler purchase.success#app',
      '  store commit',
    ]);
    const process = raw.find((span) => span.name === 'process purchase.success')!;
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.attributes).toEqual({
      'messaging.system': 'payhook',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.message.id': `pay-${sequence}:purchase:success:1000`,
      'payhook.via': 'request',
      'payhook.event': 'purchase.success',
      'payhook.outcome': 'handled',
      'payhook.status_code': 200,
      'payhook.handler.count': 1,
      'payhook.secret.index': 0,
    });
    const store = raw.find((span) => span.name === 'store claim')!;
    expect([store.kind, store.attributes]).toEqual([
      SpanKind.CLIENT,
      { 'payhook.store.step': 'claim', 'payhook.store.name': 'memory' },
    ]);
  });

  it('a child of the HTTP server span active when the delivery arrived', async () => {
    const handler = createWebhookHandler({ secret: SECRET, logger: false, handle: () => {} });
    const server = tracerProvider.getTracer('http').startSpan('POST /webhooks', { kind: SpanKind.SERVER });
    exporter.reset();
    await context.with(trace.setSpan(context.active(), server), () =>
      handler(post(signedForm(notification(), SECRET)), undefined),
    );
    server.end();
    expect(tree([...exporter.getFinishedSpans()])).toEqual([
      'POST /webhooks',
      '  process purchase.success [handled]',
      '    store claim',
      '    handler *#handle',
      '    store commit',
    ]);
  });

  it('a delivery refused for its signature: the span names what most likely happened in payhook.signature.hint', async () => {
    const handler = createWebhookHandler({ secret: SECRET, logger: false, handle: () => {} });
    const sha1 = encodeForm(envelope(notification(), SECRET, { algorithm: 'sha1' }));
    const { answer, spans } = await deliver(handler, post(sha1));
    expect(answer).toBe('signature.invalid');
    expect(spans.map((span) => span.attributes[ATTRIBUTES.signatureHint])).toEqual(['sha1']);
    const forged = await deliver(handler, post(signedForm(notification(), `${SECRET}-forged`)));
    expect(forged.spans[0]!.attributes).not.toHaveProperty(ATTRIBUTES.signatureHint);
  });

  it('without storeSpans (the default): no store span, the store metrics still recorded', async () => {
    instrumentation.setConfig({ enabled: true });
    try {
      const store = asyncMemoryStore();
      const down: DedupeStore = { ...store, name: 'down', claim: () => Promise.reject(new Error('down')) };
      const before = await points();
      const handled = await deliver(
        createWebhookHandler({ secret: SECRET, logger: false, store, handle: () => {} }),
        post(signedForm(notification(), SECRET)),
      );
      const failed = await deliver(
        createWebhookHandler({ secret: SECRET, logger: false, store: down, handle: () => {} }),
        post(signedForm(notification(), SECRET)),
      );
      const after = await points();
      const delta = (name: string, match: Record<string, unknown>) =>
        (after(name, match) ?? 0) - (before(name, match) ?? 0);
      expect([handled.tree, failed.tree]).toEqual([
        ['process purchase.success [handled]', '  handler *#handle'],
        ['process purchase.success [store.unavailable]'],
      ]);
      const storeName = { 'payhook.store.name': 'async-memory' };
      expect(delta('payhook.store.duration', { 'payhook.store.step': 'claim', ...storeName })).toBe(1);
      expect(delta('payhook.store.duration', { 'payhook.store.step': 'commit', ...storeName })).toBe(1);
      expect(
        delta('payhook.store.failures', { 'payhook.store.step': 'claim', 'payhook.store.name': 'down' }),
      ).toBe(1);
    } finally {
      instrumentation.setConfig({ enabled: true, storeSpans: true });
    }
  });

  it('duplicate, ignored and stale: the process span says so, with no application handler span', async () => {
    const handler = createWebhookHandler({ secret: SECRET, logger: false, ledger: createPaymentLedger() }).on(
      'purchase',
      () => {},
    );
    const plain = createWebhookHandler({ secret: SECRET, logger: false }).on('purchase', () => {});
    const body = signedForm(notification({ payment_id: 'pay-dup' }), SECRET);
    await deliver(handler, post(body));
    const duplicate = await deliver(handler, post(body));
    const ignored = await deliver(
      plain,
      post(signedForm(notification({ method: 'refund', operation_id: 'op-1' }), SECRET)),
    );
    const stale = await deliver(
      handler,
      post(
        signedForm(notification({ payment_id: 'pay-dup', status: 'pending', status_code: '2122' }), SECRET),
      ),
    );
    seen.push(...duplicate.spans, ...ignored.spans, ...stale.spans);
    expect([duplicate.tree, ignored.tree, stale.tree]).toEqual([
      ['process purchase.success [duplicate]', '  store claim'],
      ['process refund.success [ignored]'],
      // The ledger recorded it under its claim, and ran no application handler.
      ['process purchase.pending [stale]', '  store claim', '  handler ledger#memory', '  store commit'],
    ]);
  });

  it('every refusal code: the process span carries error.type, with the children the delivery reached', async () => {
    vi.useFakeTimers();
    const stuck: DedupeStore = {
      name: 'stuck',
      claim: () => ({ status: 'in_flight' }),
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    const broken: DedupeStore = {
      name: 'broken',
      claim: () => {
        throw new Error(`connection to ${EMAIL}'s shard refused`);
      },
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    const taken: DedupeStore = {
      name: 'taken',
      claim: () => ({ status: 'claimed', token: 't', fence: 1 }),
      renew: () => false,
      commit: () => false,
      release: () => undefined,
    };
    const main = createWebhookHandler({
      secret: [SECRET, { id: 'old', secret: OLD_SECRET }],
      maxBodyBytes: 4096,
      readTimeoutMs: 50,
      logger: false,
      handle: app,
    });
    const handlers: Record<string, WebhookHandler> = {
      main,
      sender: createWebhookHandler({
        secret: SECRET,
        allowedSenders: ['10.9.8.7'],
        logger: false,
        handle: app,
      }),
      resolver: createWebhookHandler({ secret: () => undefined, logger: false, handle: app }),
      vault: createWebhookHandler({
        secret: () => {
          throw new Error(`vault token ${SECRET}`);
        },
        logger: false,
        handle: app,
      }),
      stuck: createWebhookHandler({
        secret: SECRET,
        store: stuck,
        inFlightWaitMs: 20,
        logger: false,
        handle: app,
      }),
      broken: createWebhookHandler({ secret: SECRET, store: broken, logger: false, handle: app }),
      queueDown: createWebhookHandler({
        secret: SECRET,
        queue: {
          enqueue: async () => {
            throw new Error(`the queue at ${EMAIL}'s shard refused`);
          },
        },
        logger: false,
        handle: app,
      }),
      hanging: createWebhookHandler({
        secret: SECRET,
        handlerTimeoutMs: 30,
        logger: false,
        handle: () => new Promise(() => {}),
      }),
      relayed: createWebhookHandler({
        secret: SECRET,
        relay: { key: RELAY_KEY, maxAgeMs: 60_000 },
        logger: false,
        handle: app,
      }),
      taken: createWebhookHandler({
        secret: SECRET,
        store: taken,
        leaseMs: 30,
        logger: false,
        handle: (_n, _c, d) => new Promise((resolve) => d.signal.addEventListener('abort', resolve)),
      }).onAny(app),
    };
    const consumed = new PassThrough();
    consumed.end();
    consumed.resume();
    await new Promise((resolve) => consumed.on('end', resolve));
    const stalled = new PassThrough();
    const valid = () => signedForm(notification(), SECRET);
    const relayed = (body: string, header: string): WebhookRequest =>
      post(body, { ...FORM, 'x-payhook-relay': header });
    const forwarded = valid();
    const calls: [string, WebhookRequest][] = [
      ['main', { ...post(valid()), method: 'GET' }],
      ['sender', post(valid())],
      ['main', post(valid(), { 'content-type': 'text/plain' })],
      ['main', post(signedForm(notification({ description: 'x'.repeat(5000) }), SECRET))],
      ['main', { method: 'POST', headers: FORM, stream: stalled }],
      [
        'main',
        post(`{"data": ${JSON.stringify(envelope(notification(), SECRET).data)}`, {
          'content-type': 'application/json',
        }),
      ],
      ['main', post(encodeForm({ data: envelope(notification(), SECRET).data }))],
      ['main', post(`${valid()}&data=${envelope(notification(), SECRET).data}`)],
      ['main', { method: 'POST', headers: FORM, stream: consumed }],
      ['main', post(signedForm(notification(), 'not-the-secret'))],
      ['resolver', post(valid())],
      ['vault', post(valid())],
      ['main', post(signedData('%%%not*base64', SECRET))],
      ['main', post(signedData(encodeBase64Url(`card ${CARD_TOKEN} is not JSON`), SECRET))],
      ['main', post(signedData(encodeBase64Url(`"${CARD_TOKEN}"`), SECRET))],
      ['main', post(signedForm({ cc_token: CARD_TOKEN, customer_email: EMAIL, status: 'success' }, SECRET))],
      ['stuck', post(valid())],
      ['broken', post(valid())],
      ['queueDown', post(valid())],
      ['main', post(signedForm(notification({ order_id: 'boom' }), SECRET))],
      ['hanging', post(valid())],
      ['taken', post(valid())],
      ['main', post(signedForm(notification(), OLD_SECRET))],
      ['relayed', relayed(forwarded, 'v=1;sig=')],
      ['relayed', relayed(forwarded, relayHeader(forwarded, '10.9.8.7', {}, 'another-key'))],
      ['relayed', relayed(forwarded, relayHeader(`${forwarded}&x=1`, '10.9.8.7'))],
      ['relayed', relayed(forwarded, relayHeader(forwarded, '10.9.8.7', { receivedAt: new Date(0) }))],
      ['relayed', { ...relayed(forwarded, relayHeader(forwarded, '10.9.8.7')), body: { data: 'x' } }],
    ];
    const trees: Record<string, string[]> = {};
    for (const [name, request] of calls) {
      const { answer, tree: spans, spans: raw } = await deliver(handlers[name]!, request);
      seen.push(...raw);
      trees[answer] = spans;
    }
    stalled.destroy();
    const codes = Object.keys(ERROR_STATUS).sort();
    expect(Object.keys(trees).sort()).toEqual([...codes, 'handled'].sort());
    for (const code of codes) {
      expect(trees[code]![0], code).toMatch(new RegExp(`^process \\S+ \\[${code.replace('.', '\\.')}\\]$`));
    }
    expect(trees['store.unavailable']).toEqual([
      'process purchase.success [store.unavailable]',
      '  store claim [store.unavailable]',
    ]);
    expect(trees['queue.unavailable']).toEqual(['process purchase.success [queue.unavailable]']);
    expect(trees['handler.failed']).toEqual([
      'process purchase.success [handler.failed]',
      '  store claim',
      '  handler *#app [handler.failed]',
      '  store release',
    ]);
    expect(trees['handler.timeout']).toEqual(['process purchase.success [handler.timeout]', '  store claim']);
    expect(trees['signature.invalid']).toEqual(['process payhook [signature.invalid]']);
    expect(trees['notification.in_flight']?.[1]).toBe('  store claim');
  });

  it('exports no secret, signature, card token or customer field in any attribute, event or metric', async () => {
    const all = await exported(seen);
    expect(seen.length).toBeGreaterThan(30);
    for (const secret of [SECRET, OLD_SECRET, CARD_TOKEN, EMAIL, PHONE, '444455******1111', 'order-1']) {
      expect(all).not.toContain(secret);
    }
    const signature = envelope(notification(), SECRET).signature;
    expect(all).not.toContain(signature.slice(0, 20));
  });
});

describe('PayhookInstrumentation: metrics', () => {
  it('counts deliveries by outcome and event, refusals by code, and records handler and store durations', async () => {
    const store = asyncMemoryStore();
    const handler = createWebhookHandler({ secret: SECRET, logger: false, store }).on('refund', () => {});
    await reader.collect();
    const before = await points();
    const body = signedForm(notification({ method: 'refund', operation_id: 'op-metrics' }), SECRET);
    await handler(post(body), undefined);
    await handler(post(body), undefined);
    await handler(post(signedForm(notification(), 'wrong')), undefined);
    const after = await points();
    const delta = (name: string, match: Record<string, unknown>) =>
      (after(name, match) ?? 0) - (before(name, match) ?? 0);
    expect(
      delta('messaging.process.duration', {
        'payhook.outcome': 'handled',
        'payhook.event': 'refund.success',
      }),
    ).toBe(1);
    expect(
      delta('messaging.process.duration', {
        'payhook.outcome': 'duplicate',
        'payhook.event': 'refund.success',
      }),
    ).toBe(1);
    expect(delta('payhook.refusals', { 'error.type': 'signature.invalid', 'payhook.status_code': 401 })).toBe(
      1,
    );
    expect(delta('payhook.handler.duration', { 'payhook.handler.id': 'refund#0' })).toBe(1);
    expect(
      delta('payhook.store.duration', {
        'payhook.store.step': 'commit',
        'payhook.store.name': 'async-memory',
      }),
    ).toBe(1);
    // MemoryStore answers in-process, without a promise: spans, but no duration record.
    const inProcess = { 'payhook.store.step': 'commit', 'payhook.store.name': 'memory' };
    const beforeMemory = await points();
    await createWebhookHandler({ secret: SECRET, logger: false, handle: () => {} })(
      post(signedForm(notification(), SECRET)),
      undefined,
    );
    expect(
      ((await points())('payhook.store.duration', inProcess) ?? 0) -
        (beforeMemory('payhook.store.duration', inProcess) ?? 0),
    ).toBe(0);
    expect(
      delta('messaging.process.duration', {
        'payhook.outcome': 'refused',
        'error.type': 'signature.invalid',
      }),
    ).toBe(1);
  });

  it('counts store failures by step and store', async () => {
    const before = await points();
    const down: DedupeStore = {
      name: 'down',
      claim: () => Promise.reject(new Error('down')),
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    await createWebhookHandler({ secret: SECRET, logger: false, store: down, handle: () => {} })(
      post(signedForm(notification(), SECRET)),
      undefined,
    );
    const after = await points();
    const match = {
      'payhook.store.step': 'claim',
      'payhook.store.name': 'down',
      'error.type': 'store.unavailable',
    };
    expect(
      (after('payhook.store.failures', match) ?? 0) - (before('payhook.store.failures', match) ?? 0),
    ).toBe(1);
  });
});

describe('PayhookInstrumentation: lifecycle', () => {
  it('is an OpenTelemetry instrumentation: name, version, config; disable stops every span and metric', async () => {
    expect(instrumentation.instrumentationName).toBe('@payhook/opentelemetry');
    expect(instrumentation.getConfig()).toEqual({ enabled: true, storeSpans: true });
    expect(new PayhookInstrumentation({ enabled: false }).getConfig()).toEqual({ enabled: false });
    instrumentation.disable();
    expect(instrumentation.getConfig()).toEqual({ enabled: false, storeSpans: true });
    exporter.reset();
    const handler = createWebhookHandler({ secret: SECRET, logger: false, handle: () => {} });
    await handler(post(signedForm(notification(), SECRET)), undefined);
    expect(exporter.getFinishedSpans()).toEqual([]);
    instrumentation.setConfig({ enabled: false });
    expect(instrumentation.getConfig()).toEqual({ enabled: false });
    instrumentation.enable();
    instrumentation.enable();
    expect(instrumentation.getConfig()).toEqual({ enabled: true });
    await handler(post(signedForm(notification(), SECRET)), undefined);
    expect(exporter.getFinishedSpans().filter((span) => span.name.startsWith('process'))).toHaveLength(1);
  });
});

/** A reader of the current sums and histogram counts: `(name, attributes) => value` of the point matching them. */
async function points(): Promise<(name: string, match: Record<string, unknown>) => number | undefined> {
  const { resourceMetrics } = await reader.collect();
  const all = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  return (name, match) => {
    const metric = all.find((m) => m.descriptor.name === name);
    const point = metric?.dataPoints.find((p) =>
      Object.entries(match).every(([key, value]) => p.attributes[key] === value),
    );
    if (point === undefined) return undefined;
    const value = point.value as number | { count: number };
    return typeof value === 'number' ? value : value.count;
  };
}
