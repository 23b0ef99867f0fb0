import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { ApiError, createPaymentWatch, type ResendClient } from '@payhook/payments';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricPoints, TestReader } from '../test/metrics.ts';
import { ATTRIBUTES, METRICS, PayhookInstrumentation } from './index.js';

const reader = new TestReader();
const instrumentation = new PayhookInstrumentation({ enabled: false });

beforeAll(() => {
  instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
  instrumentation.enable();
});
afterAll(() => instrumentation.disable());

describe('the payhook.payments.overdue metric', () => {
  it('counts the payments the watch reported, by reason and operation, never an order id', async () => {
    // The service knows `pending-order` (still pending), not `ghost-order`.
    const api: ResendClient = {
      async resend({ orderId }) {
        if (orderId === 'ghost-order') throw new ApiError('api.not_found', 'not found', { status: 404 });
        return { status: 200, record: undefined };
      },
    };
    let now = Date.parse('2026-11-25T09:00:00Z');
    const watch = createPaymentWatch({ api, now: () => now, maxTries: 1, logger: false });
    await watch.register({ orderId: 'ghost-order' });
    await watch.register({ orderId: 'pending-order', operation: 'auth' });
    now += 3_600_000;
    expect((await watch.reconcileOverdue()).overdue).toHaveLength(2);
    const points = await metricPoints(reader, METRICS.paymentsOverdue);
    expect(points).toEqual([
      {
        attributes: { [ATTRIBUTES.watchReason]: 'unknown_order', [ATTRIBUTES.watchOperation]: 'purchase' },
        value: 1,
      },
      {
        attributes: { [ATTRIBUTES.watchReason]: 'unsettled', [ATTRIBUTES.watchOperation]: 'auth' },
        value: 1,
      },
    ]);
    expect(JSON.stringify(points)).not.toMatch(/ghost-order|pending-order/);
  });
});
