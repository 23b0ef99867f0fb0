import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, refund, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { parseNotification } from '../notification/parse.js';
import type { Notification, NotificationEvent } from '../notification/types.js';
import { Routes } from './routes.js';

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

const noop = () => {};
const charge = parseNotification(
  purchase({ transaction_id: 'tx-1', recurring: { id: 'sub-1', status: 'active' } }),
);

/** Routes with one handler per event, each named after its event, added in `events` order. */
function routesFor(events: readonly string[], any: readonly string[] = []): Routes<undefined> {
  const routes = new Routes<undefined>();
  for (const event of events) routes.add(event, named(event));
  for (const name of any) routes.addAny(named(name));
  return routes;
}

function named(name: string): () => void {
  return { [name]: () => {} }[name]!;
}

const ids = (routes: Routes<undefined>, notification: Notification) =>
  routes.match(notification).map((route) => route.id);

describe('Routes', () => {
  it('orders a recurring charge method.status, method, recurring.status, recurring, then every onAny, whatever the order added', () => {
    const routes = routesFor(['recurring', 'purchase', 'recurring.success', 'purchase.success'], ['audit']);
    expect(ids(routes, charge)).toEqual([
      'purchase.success#purchase.success',
      'purchase#purchase',
      'recurring.success#recurring.success',
      'recurring#recurring',
      '*#audit',
    ]);
  });

  it('keeps the order handlers were added within one event, and onAny in its own order', () => {
    const routes = new Routes<undefined>();
    routes.addAny(named('first'));
    routes.add('purchase', named('fulfil'));
    routes.add('purchase', named('email'));
    routes.addAny(named('second'));
    expect(ids(routes, charge)).toEqual(['purchase#fulfil', 'purchase#email', '*#first', '*#second']);
  });

  it('reaches no recurring event for a one-off payment nor a secondary operation, and no handler of another method', () => {
    const routes = routesFor(['purchase.success', 'recurring', 'refund', 'refund.success'], ['audit']);
    expect(ids(routes, parseNotification(purchase()))).toEqual([
      'purchase.success#purchase.success',
      '*#audit',
    ]);
    expect(ids(routes, parseNotification(refund()))).toEqual([
      'refund.success#refund.success',
      'refund#refund',
      '*#audit',
    ]);
  });

  it('names an anonymous handler by its position in its event, and a repeated name with a counter', () => {
    const routes = new Routes<undefined>();
    routes.add('purchase', () => {});
    routes.add('purchase', noop);
    routes.add('purchase', noop);
    expect(ids(routes, charge)).toEqual(['purchase#0', 'purchase#noop', 'purchase#noop#2']);
  });

  it('answers a new list each time: a handler added meanwhile reaches the next notification only', () => {
    const routes = routesFor(['purchase']);
    const before = routes.match(charge);
    routes.add('purchase', named('late'));
    expect(before.map((route) => route.id)).toEqual(['purchase#purchase']);
    expect(ids(routes, charge)).toEqual(['purchase#purchase', 'purchase#late']);
  });
});
