import {
  type Attributes,
  context,
  type Meter,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type * as Core from '@payhook/core';
import { PayhookInstrumentation } from '@payhook/opentelemetry';

/** Keeps what the SDK aggregates in memory; collected by nobody, as between two exports of a periodic reader. */
class IdleReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * `PayhookInstrumentation` on the OpenTelemetry SDK with in-memory exporters, not yet subscribed: the micro row
 * subscribes it for its own runs only (`enable`, `disable`), as every other row must run without a subscriber.
 * Each `disable` flushes the spans (outside the timed runs), checks that some arrived, and empties the exporter, so
 * the pool's spans do not pile up over the rounds. `simple`: the exporting processor of the SDK's examples instead
 * (one export per span, synchronous), and `storeSpans`, for comparison only (bench/instructions.ts).
 */
export function otelSubscriber({ simple = false, storeSpans = false } = {}): {
  enable: () => void;
  disable: () => Promise<void>;
} {
  const instrumentation = new PayhookInstrumentation({ enabled: false, storeSpans });
  const { provider, meterProvider, flush } = sdk(simple);
  instrumentation.setTracerProvider(provider);
  instrumentation.setMeterProvider(meterProvider);
  return {
    enable: () => instrumentation.enable(),
    disable: async () => {
      instrumentation.disable();
      await flush();
    },
  };
}

/**
 * The SDK both instrumented rows use: the batching processor every production setup uses (NodeSDK's default; the
 * queue holds a round's spans) or, `simple`, the exporting one of the SDK's examples, into an in-memory exporter;
 * a meter whose reader collects nothing. `flush` exports what is queued, checks that spans arrived, empties it.
 */
function sdk(simple: boolean): {
  provider: BasicTracerProvider;
  meterProvider: MeterProvider;
  tracer: Tracer;
  meter: Meter;
  flush: () => Promise<void>;
} {
  const exporter = new InMemorySpanExporter();
  const processor = simple
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(exporter, { maxQueueSize: 1 << 20, scheduledDelayMillis: 100 });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  const flush = async (): Promise<void> => {
    await provider.forceFlush();
    if (exporter.getFinishedSpans().length === 0) throw new Error('the OpenTelemetry row exported no span');
    exporter.reset();
  };
  const name = '@payhook/opentelemetry';
  return {
    provider,
    meterProvider,
    tracer: provider.getTracer(name),
    meter: meterProvider.getMeter(name),
    flush,
  };
}

/** The state a hand-written instrumentation carries through one delivery: its span and what the handler learnt. */
interface HandOpen {
  span: Span;
  event: string | undefined;
  key: string | undefined;
  secretIndex: number;
  secretId: string | undefined;
}

const HAND_START: Attributes = {
  'messaging.system': 'payhook',
  'messaging.operation.type': 'process',
  'messaging.operation.name': 'process',
  'payhook.via': 'request',
};

/**
 * The same spans, attributes and metrics as `PayhookInstrumentation` (default, no store spans) on the same SDK and
 * exporter, written by hand with `@opentelemetry/api` around the core handler with nobody subscribed: what a
 * merchant would write without `@payhook/opentelemetry`, the floor issue 34's 1.15× target is measured against.
 * The delivery's span travels to the handler as its context; the handler reports its event, key and secret back.
 */
export function handWrittenDelivery(
  core: typeof Core,
  options: Omit<Core.WebhookHandlerOptions<HandOpen>, 'handle'>,
  application: (notification: Core.Notification) => void,
  { simple = false } = {},
): { deliver: (request: Core.WebhookRequest) => Promise<Core.WebhookResult>; flush: () => Promise<void> } {
  const { tracer, meter, flush } = sdk(simple);
  const processDuration = meter.createHistogram('messaging.process.duration', { unit: 's' });
  const refusals = meter.createCounter('payhook.refusals', { unit: '{delivery}' });
  const handlerDuration = meter.createHistogram('payhook.handler.duration', { unit: 's' });
  const handle = (
    notification: Core.Notification,
    open: HandOpen | undefined,
    delivery: Core.Delivery,
  ): void => {
    // Always given here: every delivery goes through `deliver` below, which passes its `open`.
    if (open === undefined) return;
    open.event = `${notification.method}.${notification.status}`;
    open.key = delivery.key;
    open.secretIndex = delivery.secretIndex;
    open.secretId = delivery.secretId;
    const startedAt = performance.now();
    const attributes: Attributes = { 'payhook.handler.id': '*#handle' };
    if (delivery.key !== undefined) attributes['messaging.message.id'] = delivery.key;
    const parent = trace.setSpan(context.active(), open.span);
    const span = tracer.startSpan('handler *#handle', { kind: SpanKind.INTERNAL, attributes }, parent);
    application(notification);
    span.end();
    handlerDuration.record((performance.now() - startedAt) / 1000, { 'payhook.handler.id': '*#handle' });
  };
  const webhook = core.createWebhookHandler<HandOpen>({ ...options, handle });
  const deliver = async (request: Core.WebhookRequest): Promise<Core.WebhookResult> => {
    const startedAt = performance.now();
    const span = tracer.startSpan('process payhook', { kind: SpanKind.CONSUMER, attributes: HAND_START });
    const open: HandOpen = { span, event: undefined, key: undefined, secretIndex: -1, secretId: undefined };
    const result = await webhook(request, open);
    const code = result.error?.code;
    if (open.event !== undefined) span.updateName(`process ${open.event}`);
    if (code !== undefined) {
      span.setAttribute('error.type', code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      refusals.add(1, { 'error.type': code, 'payhook.status_code': result.status, 'payhook.via': 'request' });
    }
    const attributes: Attributes = {
      'payhook.outcome': result.outcome,
      'payhook.handler.count': open.event === undefined ? 0 : 1,
      'payhook.secret.index': open.secretIndex,
      'payhook.status_code': result.status,
    };
    if (open.event !== undefined) attributes['payhook.event'] = open.event;
    if (open.key !== undefined) attributes['messaging.message.id'] = open.key;
    if (open.secretId !== undefined) attributes['payhook.secret.id'] = open.secretId;
    span.setAttributes(attributes);
    span.end();
    const metric: Attributes = {
      'messaging.system': 'payhook',
      'messaging.operation.name': 'process',
      'payhook.outcome': result.outcome,
      'payhook.via': 'request',
    };
    if (open.event !== undefined) metric['payhook.event'] = open.event;
    if (code !== undefined) metric['error.type'] = code;
    processDuration.record((performance.now() - startedAt) / 1000, metric);
    return result;
  };
  return { deliver, flush };
}
