import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
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
  const exporter = new InMemorySpanExporter();
  const instrumentation = new PayhookInstrumentation({ enabled: false, storeSpans });
  // The batching processor every production setup uses (NodeSDK's default); the queue holds a round's spans.
  const processor = simple
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(exporter, { maxQueueSize: 1 << 20, scheduledDelayMillis: 100 });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  instrumentation.setTracerProvider(provider);
  instrumentation.setMeterProvider(new MeterProvider({ readers: [new IdleReader()] }));
  return {
    enable: () => instrumentation.enable(),
    disable: async () => {
      instrumentation.disable();
      await provider.forceFlush();
      if (exporter.getFinishedSpans().length === 0) throw new Error('the OpenTelemetry row exported no span');
      exporter.reset();
    },
  };
}
