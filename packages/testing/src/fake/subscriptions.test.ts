import { decodeData, verifySignature } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from './outcomes.js';
import { FakeService } from './service.js';
import type { WebhookMessage } from './transport.js';

const SECRET = 'subscription-secret';

function recorder() {
  const sent: Array<{ url: string; notification: Record<string, unknown> }> = [];
  const transport = async (message: WebhookMessage) => {
    expect(verifySignature(message.data, message.signature, SECRET)).toMatchObject({ valid: true });
    sent.push({ url: message.url, notification: decodeData(message.data) as Record<string, unknown> });
    return { status: 200, body: '{"ok":true}' };
  };
  return { sent, transport };
}

function subscribe(fake: FakeService, initRecurring: Record<string, unknown>, orderId = 'sub-1') {
  const created = fake.createPayment({
    pos_id: fake.project.posId,
    mode: 'direct',
    method: 'purchase',
    amount: 9.99,
    currency: 'XTS',
    description: 'Tea of the month',
    order_id: orderId,
    cc_number: TEST_CARDS.success,
    exp_month: 12,
    exp_year: 2031,
    card_cvv: '123',
    server_url: 'http://127.0.0.1:9/webhooks',
    init_recurring: initRecurring,
  });
  if (created.mode !== 'direct') throw new Error('expected a direct payment');
  const recurring = created.record.recurring as { id: string; status: string };
  return { record: created.record, id: recurring.id };
}

describe('subscriptions on the test clock', () => {
  it('charges monthly for a year on month-end dates, retries failures, then stops when canceled', async () => {
    const { sent, transport } = recorder();
    const fake = new FakeService({ secret: SECRET, now: '2026-01-31T09:30:00Z', seed: 11, transport });
    const { record, id } = subscribe(fake, {
      interval_unit: 'month',
      interval_count: 1,
      retry_attempts: 2,
      retry_interval_hours: 24,
      time: '09:00:00',
      amount: 4.5,
    });
    // The creation response says `init`; the initial payment succeeded, so its webhook says `active`.
    expect(record.recurring).toEqual({ id, status: 'init' });
    expect(fake.subscription(id)!.status).toBe('active');
    expect(record.status).toBe('success');
    await fake.idle();
    expect(
      sent.map((s) => [s.notification.amount, (s.notification.recurring as { status: string }).status]),
    ).toEqual([[9.99, 'active']]);

    // charge 2 fails once and succeeds on its 2nd retry; charge 3 fails and exhausts both retries.
    fake.queueChargeOutcomes(id, [
      'success',
      'success',
      'decline',
      'decline',
      'success',
      'decline',
      'insufficient_funds',
      'decline',
    ]);
    await fake.clock.advanceBy({ years: 1 });
    expect(fake.clock.now().toISOString()).toBe('2027-01-31T09:30:00.000Z');

    const charges = fake.subscription(id)!.charges;
    expect(charges.map((c) => [c.index, c.attempt, c.record.created_at, c.record.status])).toEqual([
      [0, 0, '2026-02-28T09:00:00', 'success'],
      [1, 0, '2026-03-31T09:00:00', 'success'],
      [2, 0, '2026-04-30T09:00:00', 'failure'],
      [2, 1, '2026-05-01T09:00:00', 'failure'],
      [2, 2, '2026-05-02T09:00:00', 'success'],
      [3, 0, '2026-05-31T09:00:00', 'failure'],
      [3, 1, '2026-06-01T09:00:00', 'failure'],
      [3, 2, '2026-06-02T09:00:00', 'failure'],
      [4, 0, '2026-06-30T09:00:00', 'success'],
      [5, 0, '2026-07-31T09:00:00', 'success'],
      [6, 0, '2026-08-31T09:00:00', 'success'],
      [7, 0, '2026-09-30T09:00:00', 'success'],
      [8, 0, '2026-10-31T09:00:00', 'success'],
      [9, 0, '2026-11-30T09:00:00', 'success'],
      [10, 0, '2026-12-31T09:00:00', 'success'],
      [11, 0, '2027-01-31T09:00:00', 'success'],
    ]);
    // A decline for insufficient funds has its own code, no limit_info, and is retried like any decline.
    expect(charges[5]!.record).toMatchObject({
      status_code: '2000',
      limit_info: { description: 'Daily card limit exceeded' },
    });
    expect([charges[6]!.record.status_code, charges[6]!.record.limit_info]).toEqual(['2001', undefined]);
    const transactionIds = new Set([record.transaction_id, ...charges.map((c) => c.record.transaction_id)]);
    expect(transactionIds.size).toBe(17);
    for (const charge of charges) {
      expect(charge.record).toMatchObject({
        payment_id: record.payment_id,
        order_id: 'sub-1',
        amount: 4.5,
        recurring: { id, status: 'active' },
      });
    }
    expect(charges[2]!.record).toMatchObject({
      status_code: '2000',
      limit_info: { retry_after: '2026-05-01T09:00:00', description: 'Daily card limit exceeded' },
    });
    // One webhook per transaction, in time order, each with its own transaction_id.
    await fake.idle();
    expect(sent).toHaveLength(17);
    expect(sent.slice(1).map((s) => s.notification.transaction_id)).toEqual(
      charges.map((c) => c.record.transaction_id),
    );

    fake.cancelSubscription(id);
    await fake.clock.advanceBy({ months: 3 });
    expect(fake.subscription(id)!.charges).toHaveLength(16);
    expect(sent).toHaveLength(17);

    // 4.4: the latest transaction without transactionId, a given one with it; the webhook goes again.
    const latest = fake.resend(fake.project.posId, 'sub-1', 'purchase');
    expect(latest).toMatchObject({
      transaction_id: charges[15]!.record.transaction_id,
      created_at: '2027-01-31T09:00:00',
      recurring: { id, status: 'canceled' },
    });
    const retried = fake.resend(
      fake.project.posId,
      'sub-1',
      'purchase',
      charges[4]!.record.transaction_id as string,
    );
    expect(retried).toMatchObject({ created_at: '2026-05-02T09:00:00', status: 'success' });
    await fake.idle();
    expect(sent.slice(17).map((s) => s.notification.transaction_id)).toEqual([
      charges[15]!.record.transaction_id,
      charges[4]!.record.transaction_id,
    ]);
  });

  it('counts from start_date, keeps quarter ends, stops after expiry_date and uses notification_url', async () => {
    const { sent, transport } = recorder();
    const fake = new FakeService({ secret: SECRET, now: '2026-02-10T12:00:00Z', seed: 12, transport });
    const { id } = subscribe(fake, {
      interval_unit: 'quarter',
      interval_count: 1,
      start_date: '2026-03-31',
      expiry_date: '2026-12-31',
      notification_url: 'http://127.0.0.1:9/recurring',
    });
    expect(fake.subscription(id)!.plan).toEqual({
      interval_unit: 'quarter',
      interval_count: 1,
      retry_attempts: 3,
      retry_interval_hours: 24,
      start_date: '2026-03-31',
      expiry_date: '2026-12-31',
      time: '12:00:00',
      amount: 9.99,
      notification_url: 'http://127.0.0.1:9/recurring',
    });
    await fake.clock.advanceTo('2028-01-01T00:00:00Z');
    expect(fake.subscription(id)!.charges.map((c) => c.record.created_at)).toEqual([
      '2026-03-31T12:00:00',
      '2026-06-30T12:00:00',
      '2026-09-30T12:00:00',
      '2026-12-31T12:00:00',
    ]);
    expect(sent.map((s) => s.url)).toEqual([
      'http://127.0.0.1:9/webhooks',
      'http://127.0.0.1:9/recurring',
      'http://127.0.0.1:9/recurring',
      'http://127.0.0.1:9/recurring',
      'http://127.0.0.1:9/recurring',
    ]);
  });

  it('retries a daily charge every 2 hours by default, and a new charge supersedes pending retries', async () => {
    const { transport } = recorder();
    const fake = new FakeService({ secret: SECRET, now: '2026-06-01T08:00:00Z', seed: 13, transport });
    const { id } = subscribe(fake, { interval_unit: 'day', interval_count: 1 });
    fake.queueChargeOutcomes(id, ['decline', 'decline', 'decline', 'decline', 'decline']);
    await fake.clock.advanceTo('2026-06-03T08:00:00Z');
    expect(
      fake.subscription(id)!.charges.map((c) => [c.index, c.attempt, c.record.created_at, c.record.status]),
    ).toEqual([
      [0, 0, '2026-06-02T08:00:00', 'failure'],
      [0, 1, '2026-06-02T10:00:00', 'failure'],
      [0, 2, '2026-06-02T12:00:00', 'failure'],
      [0, 3, '2026-06-02T14:00:00', 'failure'],
      [1, 0, '2026-06-03T08:00:00', 'failure'],
    ]);
  });

  it('never schedules a subscription whose initial payment was declined', async () => {
    const { transport } = recorder();
    const fake = new FakeService({ secret: SECRET, now: '2026-06-01T08:00:00Z', seed: 14, transport });
    fake.setOutcome({ orderId: 'sub-declined' }, 'decline');
    const { record, id } = subscribe(fake, { interval_unit: 'week', interval_count: 1 }, 'sub-declined');
    expect(record).toMatchObject({ status: 'failure', recurring: { id, status: 'init' } });
    expect(fake.subscription(id)!.status).toBe('canceled');
    await fake.clock.advanceBy({ months: 2 });
    expect(fake.subscription(id)!.charges).toEqual([]);
  });
});
