import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../../test/fixtures.js';
import { parseNotification } from '../notification/parse.js';
import { OrderingGuard } from './ordering.js';

const payment = (status: string, overrides: Record<string, unknown> = {}) =>
  parseNotification(purchase({ status, ...overrides }));

describe('OrderingGuard', () => {
  it('finds a status earlier in the cycle than one handled for the same payment stale', () => {
    const guard = new OrderingGuard();
    guard.record(payment('success'));
    expect([guard.isStale(payment('pending')), guard.isStale(payment('init'))]).toEqual([true, true]);
    expect([guard.isStale(payment('success')), guard.isStale(payment('failure'))]).toEqual([false, false]);
  });

  it('never finds a status stale before one was handled, nor one of another payment', () => {
    const guard = new OrderingGuard();
    expect(guard.isStale(payment('pending'))).toBe(false);
    guard.record(payment('success'));
    expect(guard.isStale(payment('pending', { payment_id: 'another-payment' }))).toBe(false);
  });

  it('keeps the furthest status: recording an earlier one after a later changes nothing', () => {
    const guard = new OrderingGuard();
    guard.record(payment('success'));
    guard.record(payment('pending'));
    expect(guard.isStale(payment('processing'))).toBe(true);
  });

  it('leaves unknown statuses and secondary operations (capture, void, refund) alone', () => {
    const guard = new OrderingGuard();
    guard.record(payment('success'));
    expect(guard.isStale(payment('rejected'))).toBe(false);
    const handledRefund = parseNotification(refund({ status: 'success' }));
    guard.record(handledRefund);
    expect(guard.isStale(parseNotification(refund({ status: 'pending' })))).toBe(false);
  });

  it('forgets the oldest payment first past maxEntries', () => {
    const guard = new OrderingGuard({ maxEntries: 2 });
    for (const id of ['p-1', 'p-2', 'p-3']) guard.record(payment('success', { payment_id: id }));
    expect(guard.isStale(payment('pending', { payment_id: 'p-1' }))).toBe(false);
    expect(guard.isStale(payment('pending', { payment_id: 'p-3' }))).toBe(true);
  });
});
