import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, refund, SECRET } from '../test/fixtures.js';
import { createWebhookHandler } from './handler.js';
import type { NotificationEvent } from './notification.js';

// The events table of the core README, one row per `it`: which events a notification reaches, in order.
const EVENTS: NotificationEvent[] = [
  'purchase',
  'purchase.success',
  'purchase.pending',
  'auth',
  'auth.success',
  'refund',
  'refund.success',
  'recurring',
  'recurring.success',
  'recurring.failure',
];

async function eventsReached(notification: Record<string, unknown>): Promise<string[]> {
  const reached: string[] = [];
  const webhook = createWebhookHandler({ secret: SECRET, store: false, logger: false });
  for (const event of EVENTS) webhook.on(event, () => void reached.push(event));
  webhook.onAny(() => void reached.push('*'));
  const result = await webhook(post(formBody(notification)), undefined);
  expect(result.status).toBe(200);
  return reached;
}

const SUBSCRIPTION = { id: 'd4c3b2a1-0000-4000-8000-000000000001', status: 'active' };

describe('events: what each name matches', () => {
  it('method and method.status: a one-off purchase reaches purchase.success and purchase, never recurring', async () => {
    expect(await eventsReached(purchase())).toEqual(['purchase.success', 'purchase', '*']);
    expect(await eventsReached(purchase({ status: 'pending', status_code: '2122' }))).toEqual([
      'purchase.pending',
      'purchase',
      '*',
    ]);
  });

  it('a secondary operation reaches its own method only', async () => {
    expect(await eventsReached(refund())).toEqual(['refund.success', 'refund', '*']);
  });

  it("recurring: a subscription's FIRST payment reaches recurring (and purchase) as well", async () => {
    const first = purchase({ recurring: SUBSCRIPTION });
    expect(await eventsReached(first)).toEqual([
      'purchase.success',
      'purchase',
      'recurring.success',
      'recurring',
      '*',
    ]);
  });

  it('recurring: each scheduled charge reaches the same events as the first payment', async () => {
    const charge = purchase({
      recurring: SUBSCRIPTION,
      transaction_id: '0c1b2a39-4d5e-4f60-8172-000000000002',
      created_at: '2026-12-22T10:15:00',
      processed_at: '2026-12-22T10:15:01',
    });
    expect(await eventsReached(charge)).toEqual([
      'purchase.success',
      'purchase',
      'recurring.success',
      'recurring',
      '*',
    ]);
  });

  it('recurring.failure: a declined charge (or first payment) of a subscription', async () => {
    const declined = purchase({ recurring: SUBSCRIPTION, status: 'failure', status_code: '2100' });
    expect(await eventsReached(declined)).toEqual(['purchase', 'recurring.failure', 'recurring', '*']);
  });

  it('an authorization with recurring reaches auth and recurring', async () => {
    const auth = purchase({ method: 'auth', recurring: SUBSCRIPTION, status_code: '1002' });
    expect(await eventsReached(auth)).toEqual([
      'auth.success',
      'auth',
      'recurring.success',
      'recurring',
      '*',
    ]);
  });
});
