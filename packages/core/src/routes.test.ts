import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../test/fixtures.js';
import type { Notification } from './notification.js';
import { parseNotification } from './parse.js';
import { Routes } from './routes.js';

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
