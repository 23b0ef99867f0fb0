import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createWebhookHandler } from '@payhook/core';
import { createPaymentLedger } from '@payhook/payments';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formBody, post, purchase, refund, SECRET } from '../../core/test/fixtures.ts';
import { metricPoints, TestReader } from '../test/metrics.ts';
import { ATTRIBUTES, METRICS, PayhookInstrumentation } from './index.js';

const reader = new TestReader();
const instrumentation = new PayhookInstrumentation({ enabled: false });

beforeAll(() => {
  instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
  instrumentation.enable();
});
afterAll(() => instrumentation.disable());

describe('the payhook.ledger.decisions metric', () => {
  it('counts stale and conflicting notifications by outcome and method, never an order id', async () => {
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, ledger: createPaymentLedger() });
    const order = { order_id: 'order-metric', amount: 100 };
    const deliver = (n: Record<string, unknown>) => webhook(post(formBody(n)), undefined);
    expect((await deliver(purchase(order))).outcome).toBe('handled');
    expect((await deliver(purchase({ ...order, status: 'pending', status_code: '2122' }))).outcome).toBe(
      'stale',
    );
    expect((await deliver(purchase({ ...order, status: 'failure', status_code: '2001' }))).outcome).toBe(
      'conflict',
    );
    expect((await deliver(refund({ ...order, operation_id: 'r-big', amount: 150 }))).outcome).toBe(
      'conflict',
    );
    const points = await metricPoints(reader, METRICS.ledgerDecisions);
    const count = (outcome: string, method: string) =>
      points.find(
        (p) =>
          p.attributes[ATTRIBUTES.ledgerOutcome] === outcome &&
          p.attributes[ATTRIBUTES.ledgerMethod] === method,
      )?.value;
    expect([count('stale', 'purchase'), count('conflict', 'purchase'), count('conflict', 'refund')]).toEqual([
      1, 1, 1,
    ]);
    expect(JSON.stringify(points)).not.toContain('order-metric');
  });
});
