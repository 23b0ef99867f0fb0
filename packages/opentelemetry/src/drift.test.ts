import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { signedForm } from '../../../test/support/signed-form.ts';
import { metricPoints, TestReader } from '../test/metrics.ts';
import { ATTRIBUTES, METRICS, PayhookInstrumentation } from './index.js';

const SECRET = 'otel-drift-secret-81fe';

const reader = new TestReader();
const instrumentation = new PayhookInstrumentation({ enabled: false });

beforeAll(() => {
  instrumentation.setTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }),
  );
  instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
  instrumentation.enable();
});
afterAll(() => instrumentation.disable());

const notification = (fields: Record<string, unknown>) =>
  purchase({ payment_id: `pay-${Math.random()}`, order_id: 'order-drift-7', ...fields });

describe('the payhook.drift metric', () => {
  it('counts new fields, statuses and coerced fields by kind and name, never a value', async () => {
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const deliver = (fields: Record<string, unknown>) =>
      webhook({ method: 'POST', headers, body: signedForm(notification(fields), SECRET) }, undefined);
    expect((await deliver({ refund_reason: 'duplicate order 7', status: 'rejected' })).status).toBe(200);
    expect((await deliver({ refund_reason: 'another reason', amount: '12.50' })).status).toBe(200);
    expect((await deliver({})).status).toBe(200);
    const points = await metricPoints(reader, METRICS.drift);
    expect(points).toEqual([
      { attributes: { [ATTRIBUTES.driftKind]: 'field', [ATTRIBUTES.driftName]: 'refund_reason' }, value: 2 },
      { attributes: { [ATTRIBUTES.driftKind]: 'status', [ATTRIBUTES.driftName]: 'rejected' }, value: 1 },
      {
        attributes: {
          [ATTRIBUTES.driftKind]: 'coerced',
          [ATTRIBUTES.driftName]: 'amount',
          [ATTRIBUTES.driftSentType]: 'string',
        },
        value: 1,
      },
    ]);
    expect(JSON.stringify(points)).not.toMatch(/duplicate order|another reason|12\.50|order-drift-7/);
  });
});
