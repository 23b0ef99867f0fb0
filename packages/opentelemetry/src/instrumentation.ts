import diagnostics_channel from 'node:diagnostics_channel';
import {
  type Attributes,
  type Context,
  type Counter,
  context,
  diag,
  type Histogram,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import {
  type DeliveryMessage,
  type DriftMessage,
  type HandlerRunMessage,
  type LedgerMessage,
  PAYHOOK_CHANNELS,
  type RefusalMessage,
  type StoreCallMessage,
  type WatchMessage,
} from '@payhook/core/diagnostics';
import { deliveryAttributes, metricAttributes, PROCESS_ATTRIBUTES } from './attributes.js';
import { guarded } from './guard.js';
import { ATTRIBUTES as A, METRICS } from './names.js';

declare const __PAYHOOK_OTEL_VERSION__: string | undefined;

const NAME = '@payhook/opentelemetry';
const VERSION = typeof __PAYHOOK_OTEL_VERSION__ === 'string' ? __PAYHOOK_OTEL_VERSION__ : '0.0.0-dev';

/**
 * The configuration of `PayhookInstrumentation`, in the shape of OpenTelemetry's `InstrumentationConfig`.
 *
 * @example
 * new PayhookInstrumentation({ enabled: false }); // subscribes when registerInstrumentations enables it
 */
export interface PayhookInstrumentationConfig {
  /**
   * Subscribe at once, with the global tracer and meter providers.
   * @default true
   */
  enabled?: boolean;
  /**
   * A span per call of the duplicate store (`store claim`, `store commit`...), under its delivery's span. Off, the
   * store's metrics are still recorded and a failed call still shows as the delivery span's `error.type`
   * (`store.unavailable`); on, each delivery exports two or three spans more, which on an in-process store cost more
   * than the rest of the instrumentation together (bench/README.md).
   * @default false
   */
  storeSpans?: boolean;
  /**
   * Receives what the SDK threw while payhook's spans and metrics were recorded (a span processor, an exporter, a
   * metric reader). It is caught before it reaches `node:diagnostics_channel`, which would rethrow it as an uncaught
   * exception and end the process; the delivery is answered as if nobody listened. Without `onError`, the first
   * such error of this instrumentation goes to OpenTelemetry's `diag` logger, the others are dropped.
   */
  onError?: (error: unknown) => void;
}

interface Instruments {
  readonly processDuration: Histogram;
  readonly refusals: Counter;
  readonly handlerDuration: Histogram;
  readonly storeDuration: Histogram;
  readonly storeFailures: Counter;
  readonly drift: Counter;
  readonly overdue: Counter;
  readonly ledger: Counter;
}

/** A span in progress (none for a store call without `storeSpans`) and when it started, for the duration metrics. */
interface Open {
  readonly span: Span | undefined;
  readonly startedAt: number;
}

type TracingHandlers = {
  start(message: unknown): void;
  end(message: unknown): void;
  asyncStart(message: unknown): void;
  asyncEnd(message: unknown): void;
  error(message: unknown): void;
};

/**
 * Turns payhook's `node:diagnostics_channel` messages into OpenTelemetry spans and metrics: a messaging "process"
 * span per delivery (a child of the span active when it arrived: the HTTP server span), a child span per handler
 * run and per store call, and the counters and histograms merchants alert on. Never exports a secret, the
 * signature, a card token or a field of the notification: only its key, event, outcome and error code.
 *
 * Use it as any OpenTelemetry instrumentation (`registerInstrumentations({ instrumentations: [new
 * PayhookInstrumentation()] })`), or alone: constructed, it subscribes with the global providers.
 *
 * @example
 * import { registerInstrumentations } from '@opentelemetry/instrumentation';
 * import { PayhookInstrumentation } from '@payhook/opentelemetry';
 * registerInstrumentations({ instrumentations: [new PayhookInstrumentation()] });
 */
export class PayhookInstrumentation {
  /** `@payhook/opentelemetry`: the tracer's and meter's name. */
  readonly instrumentationName: string = NAME;
  /** This package's version. */
  readonly instrumentationVersion: string = VERSION;
  #config: PayhookInstrumentationConfig;
  #tracer: Tracer;
  #instruments: Instruments;
  #enabled = false;
  #failed = false;
  readonly #open = new WeakMap<object, Open>();

  constructor(config: PayhookInstrumentationConfig = {}) {
    this.#config = { enabled: true, ...config };
    this.#tracer = trace.getTracer(NAME, VERSION);
    this.#instruments = instrumentsOf(metrics.getMeterProvider());
    if (this.#config.enabled) this.enable();
  }

  /** Creates spans with `provider` from now on (`registerInstrumentations` calls it). */
  setTracerProvider(provider: TracerProvider): void {
    this.#tracer = provider.getTracer(NAME, VERSION);
  }

  /** Records metrics with `provider` from now on (`registerInstrumentations` calls it). */
  setMeterProvider(provider: MeterProvider): void {
    this.#instruments = instrumentsOf(provider);
  }

  /** Replaces the configuration (`enabled` takes effect through `enable()` and `disable()`). */
  setConfig(config: PayhookInstrumentationConfig): void {
    this.#config = { ...config };
  }

  /** The configuration; `enabled` says whether it is subscribed. */
  getConfig(): PayhookInstrumentationConfig {
    return this.#config;
  }

  /** Subscribes to payhook's channels; a second call does nothing. */
  enable(): void {
    if (this.#enabled) return;
    this.#enabled = true;
    this.#config = { ...this.#config, enabled: true };
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.delivery).subscribe(this.#delivery);
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.handler).subscribe(this.#handler);
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.store).subscribe(this.#store);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.refusal, this.#refusal);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.drift, this.#drift);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.watch, this.#overdue);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.ledger, this.#ledger);
  }

  /** What the SDK threw: to `onError`, else once to `diag`; never back into the channel (issue 34). */
  #caught(error: unknown): void {
    const { onError } = this.#config;
    if (onError) {
      try {
        onError(error);
      } catch {
        // A failing hook must not take the process down either.
      }
      return;
    }
    if (this.#failed) return;
    this.#failed = true;
    diag.error(
      `${NAME}: the OpenTelemetry SDK threw while recording a payhook span or metric (a span processor, exporter or metric reader); the delivery was answered as usual. Later errors of this instrumentation are not reported; pass onError to see each.`,
      error,
    );
  }

  /** Unsubscribes: payhook builds no message again until something else subscribes. */
  disable(): void {
    if (!this.#enabled) return;
    this.#enabled = false;
    this.#config = { ...this.#config, enabled: false };
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.delivery).unsubscribe(this.#delivery);
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.handler).unsubscribe(this.#handler);
    diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.store).unsubscribe(this.#store);
    diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.refusal, this.#refusal);
    diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.drift, this.#drift);
    diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.watch, this.#overdue);
    diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.ledger, this.#ledger);
  }

  #begin(message: object, name: string, kind: SpanKind, parent: Context, attributes: Attributes): void {
    const span = this.#tracer.startSpan(name, { kind, attributes }, parent);
    this.#open.set(message, { span, startedAt: performance.now() });
  }

  /** The span of `message` ended; its duration in seconds, or `undefined` when it had none open. */
  #finish(message: object, errorCode: string | undefined, attributes?: Attributes): number | undefined {
    const open = this.#open.get(message);
    if (open === undefined) return undefined;
    this.#open.delete(message);
    const { span } = open;
    if (span !== undefined) {
      if (errorCode !== undefined) {
        span.setAttribute(A.errorType, errorCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
      }
      if (attributes !== undefined) span.setAttributes(attributes);
      span.end();
    }
    return (performance.now() - open.startedAt) / 1000;
  }

  /** The span a handler run or store call belongs under: its delivery's, or else the active one. */
  #parentOf(delivery: DeliveryMessage | undefined): Context {
    const span = delivery && this.#open.get(delivery)?.span;
    return span ? trace.setSpan(context.active(), span) : context.active();
  }

  readonly #onCaught = (error: unknown): void => this.#caught(error);

  readonly #delivery: TracingHandlers = guarded(this.#onCaught, {
    start: (m) => {
      const message = m as DeliveryMessage;
      const attributes = PROCESS_ATTRIBUTES[message.via];
      this.#begin(message, 'process payhook', SpanKind.CONSUMER, context.active(), attributes);
    },
    end: () => {},
    asyncStart: () => {},
    error: () => {},
    asyncEnd: (m) => {
      const message = m as DeliveryMessage;
      if (message.event !== undefined) this.#open.get(message)?.span?.updateName(`process ${message.event}`);
      const attributes = deliveryAttributes(message);
      const seconds = this.#finish(message, message.errorCode, attributes);
      // One record per delivery: its count is the deliveries by outcome and event (no separate counter to pay for).
      if (seconds !== undefined) this.#instruments.processDuration.record(seconds, metricAttributes(message));
    },
  });

  readonly #handler: TracingHandlers = guarded(this.#onCaught, {
    start: (m) => {
      const message = m as HandlerRunMessage;
      this.#begin(
        message,
        `handler ${message.handler}`,
        SpanKind.INTERNAL,
        this.#parentOf(message.delivery),
        {
          [A.handlerId]: message.handler,
          ...(message.key === undefined ? {} : { [A.messagingMessageId]: message.key }),
        },
      );
    },
    ...settledBy((m) => this.#handlerDone(m as HandlerRunMessage)),
  });

  #handlerDone(message: HandlerRunMessage): void {
    const seconds = this.#finish(message, message.errorCode);
    if (seconds === undefined) return;
    const attributes: Attributes = { [A.handlerId]: message.handler };
    if (message.errorCode !== undefined) attributes[A.errorType] = message.errorCode;
    this.#instruments.handlerDuration.record(seconds, attributes);
  }

  readonly #store: TracingHandlers = guarded(this.#onCaught, {
    start: (m) => {
      const message = m as StoreCallMessage;
      if (!this.#config.storeSpans) {
        this.#open.set(message, { span: undefined, startedAt: performance.now() });
        return;
      }
      this.#begin(message, `store ${message.step}`, SpanKind.CLIENT, this.#parentOf(message.delivery), {
        [A.storeStep]: message.step,
        [A.storeName]: message.store,
      });
    },
    ...settledBy((m) => this.#storeDone(m as StoreCallMessage)),
  });

  #storeDone(message: StoreCallMessage): void {
    const seconds = this.#finish(message, message.errorCode);
    if (seconds === undefined) return;
    const attributes: Attributes = { [A.storeStep]: message.step, [A.storeName]: message.store };
    if (message.errorCode !== undefined) {
      attributes[A.errorType] = message.errorCode;
      this.#instruments.storeFailures.add(1, attributes);
    }
    // An answer without a promise is in-process (MemoryStore): no time worth a histogram record, which would cost
    // more than the call itself.
    if (!message.settled) this.#instruments.storeDuration.record(seconds, attributes);
  }

  readonly #refusal = guarded(this.#onCaught, {
    refusal: (m: unknown): void => {
      const message = m as RefusalMessage;
      this.#instruments.refusals.add(1, {
        [A.errorType]: message.code,
        [A.status]: message.status,
        [A.via]: message.via,
      });
    },
  }).refusal;

  readonly #drift = guarded(this.#onCaught, {
    drift: (m: unknown): void => {
      for (const finding of (m as DriftMessage).findings) {
        const attributes: Attributes = { [A.driftKind]: finding.kind, [A.driftName]: finding.name };
        if (finding.sent !== undefined) attributes[A.driftSentType] = finding.sent;
        this.#instruments.drift.add(1, attributes);
      }
    },
  }).drift;

  readonly #overdue = guarded(this.#onCaught, {
    overdue: (m: unknown): void => {
      const { reason, operation } = m as WatchMessage;
      this.#instruments.overdue.add(1, { [A.watchReason]: reason, [A.watchOperation]: operation });
    },
  }).overdue;

  readonly #ledger = guarded(this.#onCaught, {
    ledger: (m: unknown): void => {
      const { outcome, method } = m as LedgerMessage;
      this.#instruments.ledger.add(1, { [A.ledgerOutcome]: outcome, [A.ledgerMethod]: method });
    },
  }).ledger;
}

/**
 * The end of a handler run's or store call's trace: at `end` when it answered without a promise (`settled`), else
 * at `asyncEnd`.
 */
function settledBy(done: (message: unknown) => void): Omit<TracingHandlers, 'start'> {
  return {
    end: (m) => {
      if ((m as { settled: boolean }).settled) done(m);
    },
    asyncStart: () => {},
    error: () => {},
    asyncEnd: done,
  };
}

function instrumentsOf(provider: MeterProvider): Instruments {
  const meter = provider.getMeter(NAME, VERSION);
  const seconds = { unit: 's' };
  return {
    processDuration: meter.createHistogram(METRICS.processDuration, {
      ...seconds,
      description:
        'Duration of handling one webhook delivery, from the request to its answer; its count is the deliveries by outcome (handled, queued, duplicate, ignored, stale, refused) and event.',
    }),
    refusals: meter.createCounter(METRICS.refusals, {
      unit: '{delivery}',
      description: 'Refused deliveries by error code (error.type).',
    }),
    handlerDuration: meter.createHistogram(METRICS.handlerDuration, {
      ...seconds,
      description: "Duration of one run of one of the application's handlers.",
    }),
    storeDuration: meter.createHistogram(METRICS.storeDuration, {
      ...seconds,
      description: 'Duration of one call to the duplicate store.',
    }),
    storeFailures: meter.createCounter(METRICS.storeFailures, {
      unit: '{call}',
      description: 'Calls to the duplicate store that threw or rejected.',
    }),
    drift: meter.createCounter(METRICS.drift, {
      unit: '{finding}',
      description:
        'What verified deliveries carried beyond what payhook types (new fields, statuses, status codes, methods; fields of another type; coerced values), by kind and name; never a value.',
    }),
    overdue: meter.createCounter(METRICS.paymentsOverdue, {
      unit: '{payment}',
      description:
        'Payments the payment watch reported overdue: still without a final notification after its tries (unsettled), unknown to the service (unknown_order), or its API unreachable for too long (api_unreachable).',
    }),
    ledger: meter.createCounter(METRICS.ledgerDecisions, {
      unit: '{notification}',
      description:
        "Notifications the payment ledger recorded without running their handlers: earlier in the payment's cycle than its state (stale), or contradicting it (conflict: a failure after a success, refunds above the amount paid).",
    }),
  };
}
