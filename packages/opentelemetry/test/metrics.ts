import { MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader the tests collect from by hand (`reader.collect()`). */
export class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** The data points of the metric named `name`: attributes and value. */
export async function metricPoints(
  reader: MetricReader,
  name: string,
): Promise<{ attributes: Record<string, unknown>; value: unknown }[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((point) => ({ attributes: point.attributes, value: point.value }));
}
