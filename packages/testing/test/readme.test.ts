// The README's three examples, so they stay type-checked and true: keep each `it` in step with the README.
import { type PurchaseNotification, parseNotification } from '@payhook/core';
import { webhookMiddleware as expressWebhook } from '@payhook/express';
import { webhookMiddleware as koaWebhook } from '@payhook/koa';
import { createPaymentLedger } from '@payhook/payments';
import express from 'express';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import {
  burst,
  createTestHandler,
  failure,
  fakePurchase,
  fakeRecurringCharge,
  outOfOrder,
  postWebhook,
  redeliver,
  threeDsPending,
} from '../src/index.js';

describe('README: Express', () => {
  const secret = 'test-secret';

  function createApp(fulfil: (orderId: string) => Promise<void>) {
    const app = express();
    app.use(
      '/webhooks',
      expressWebhook({ secret }).on('purchase.success', (payment) => fulfil(payment.order_id)),
    );
    return app;
  }

  it('fulfils a paid order once, however often it is delivered', async () => {
    const fulfilled: string[] = [];
    const app = createApp(async (orderId) => {
      fulfilled.push(orderId);
    });
    const purchase = fakePurchase({ order_id: 'order-1' });

    (await postWebhook(app, purchase, { secret })).expectHandled();
    (await postWebhook(app, redeliver(purchase), { secret })).expectDuplicate();
    (await postWebhook(app, purchase, { secret, variant: 'tampered' })).expectRefused('signature.invalid');
    expect(fulfilled).toEqual(['order-1']);
  });
});

describe('README: Koa', () => {
  const secret = 'test-secret';

  it('handles one of ten concurrent copies, and a late pending as stale', async () => {
    const recorder = createTestHandler();
    const app = new Koa();
    app.use(koaWebhook({ secret, path: '/webhooks', ledger: createPaymentLedger() }).onAny(recorder.handle));

    const purchase = fakePurchase();
    const answers = await Promise.all(burst(purchase, 10).map((copy) => postWebhook(app, copy, { secret })));
    expect(answers.filter((answer) => answer.outcome === 'handled')).toHaveLength(1);
    recorder.expectHandledOnce(purchase);

    const [paid, pending] = outOfOrder(fakePurchase());
    (await postWebhook(app, paid, { secret })).expectHandled();
    (await postWebhook(app, pending, { secret })).expectOutcome('stale');
  });
});

describe('README: a plain function', () => {
  // The application's own logic, with no HTTP and no framework.
  function nextStep(payment: PurchaseNotification): string {
    if (payment.status === 'pending' && payment.user_action_required)
      return `redirect:${payment.user_action_url}`;
    if (payment.status === 'failure') return `retry-after:${payment.limit_info?.retry_after ?? 'never'}`;
    if (payment.recurring) return `extend:${payment.recurring.id}`;
    return payment.status === 'success' ? 'fulfil' : 'wait';
  }

  const parse = (wire: object) => parseNotification(wire as Record<string, unknown>) as PurchaseNotification;

  it('decides the next step for every state the service reports', () => {
    const purchase = fakePurchase({}, { seed: 'readme' });
    expect(nextStep(parse(purchase))).toBe('fulfil');
    expect(nextStep(parse(threeDsPending(purchase)))).toBe(
      `redirect:https://payments.example/public/3ds/${purchase.payment_id}`,
    );
    expect(nextStep(parse(failure(purchase)))).toBe('retry-after:2025-03-15T10:15:30');
    const charge = fakeRecurringCharge({}, { seed: 'readme', charge: 2 });
    expect(nextStep(parse(charge))).toBe(`extend:${charge.recurring.id}`);
  });
});
