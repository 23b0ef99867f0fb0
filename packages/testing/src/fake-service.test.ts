import { decodeData, parseNotification, verifySignature } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { FakeServiceError } from './fake/errors.js';
import type { WebhookMessage } from './fake/outbox.js';
import { TEST_CARDS } from './fake/outcomes.js';
import { FakeService, type FakeServiceOptions } from './fake-service.js';

const SECRET = 'engine-secret';
let orders = 0;

function setup(options: Partial<FakeServiceOptions> = {}, answers: number[] = []) {
  const sent: Array<Record<string, unknown>> = [];
  const fake = new FakeService({
    secret: SECRET,
    now: '2026-04-01T08:00:00Z',
    seed: 31,
    transport: async (message: WebhookMessage) => {
      sent.push(decodeData(message.data) as Record<string, unknown>);
      const status = answers.shift() ?? 200;
      if (status === 0) throw new Error('connect ECONNREFUSED 127.0.0.1:9');
      return { status, body: `answer ${status}` };
    },
    ...options,
  });
  return { fake, sent };
}

function pay(fake: FakeService, overrides: Record<string, unknown> = {}) {
  const created = fake.createPayment({
    pos_id: fake.project.posId,
    mode: 'direct',
    method: 'purchase',
    amount: 100,
    currency: 'XTS',
    description: 'Engine',
    order_id: `order-${++orders}`,
    cc_number: TEST_CARDS.success,
    exp_month: 12,
    exp_year: 2030,
    card_cvv: '123',
    server_url: 'http://127.0.0.1:9/webhooks',
    ...overrides,
  });
  if (created.mode !== 'direct') throw new Error('expected direct');
  return created.record;
}

function codeOf(fn: () => unknown): [string, number] | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof FakeServiceError) return [error.code, error.status];
    throw error;
  }
  return undefined;
}

describe('FakeService payments and secondary operations', () => {
  it('signs every webhook per spec part 5 so core parses it', async () => {
    const deliveries: WebhookMessage[] = [];
    const fake = new FakeService({
      secret: SECRET,
      seed: 2,
      now: '2026-04-01T08:00:00Z',
      transport: async (m) => {
        deliveries.push(m);
        return { status: 200, body: '' };
      },
    });
    pay(fake, { order_id: 'signed-1' });
    await fake.idle();
    const [message] = deliveries;
    expect(message!.signature).toHaveLength(44);
    expect(verifySignature(message!.data, message!.signature, SECRET)).toEqual({
      valid: true,
      index: 0,
      id: undefined,
    });
    expect(parseNotification(decodeData(message!.data))).toMatchObject({
      kind: 'primary',
      method: 'purchase',
      status: 'success',
      status_code: '1000',
      order_id: 'signed-1',
    });
  });

  it('declines the decline card with limit_info and reuses an issued token', async () => {
    const { fake, sent } = setup();
    const declined = pay(fake, { cc_number: TEST_CARDS.decline });
    expect(declined).toMatchObject({
      status: 'failure',
      status_code: '2000',
      limit_info: { retry_after: '2026-04-02T08:00:00', description: 'Daily card limit exceeded' },
    });
    const first = pay(fake);
    const again = pay(fake, {
      cc_number: undefined,
      exp_month: undefined,
      exp_year: undefined,
      card_cvv: undefined,
      cc_token: `rcr:${first.cc_token as string}`,
    });
    expect(again).toMatchObject({
      status: 'success',
      cc_mask: '424242******4242',
      cc_token: `rcr:${first.cc_token}`,
    });
    await fake.idle();
    expect(sent.map((n) => n.status)).toEqual(['failure', 'success', 'success']);
  });

  it('captures part of an auth, refunds part of the capture, and refuses what is not left', async () => {
    const { fake, sent } = setup();
    const auth = pay(fake, { method: 'auth', amount: 50 });
    expect(auth).toMatchObject({ status: 'success', status_code: '1002' });
    const id = auth.payment_id as string;
    expect(codeOf(() => fake.refund(id))).toEqual(['O-409', 409]);
    expect(codeOf(() => fake.capture(id, 50.01))).toEqual(['O-422', 422]);
    const capture = fake.capture(id, 30.1);
    expect(capture).toMatchObject({
      payment_id: id,
      order_id: auth.order_id,
      mode: 'direct',
      method: 'capture',
      amount: 30.1,
      currency: 'XTS',
      status: 'success',
      status_code: '1000',
      fee: { amount: 0.45, currency: 'XTS' },
    });
    expect(codeOf(() => fake.capture(id))).toEqual(['O-409', 409]);
    expect(codeOf(() => fake.void(id))).toEqual(['O-409', 409]);
    const refund = fake.refund(id, 10.05);
    expect(refund).toMatchObject({ method: 'refund', amount: 10.05, status_code: '1004' });
    expect(refund.receipt_url).toMatch(/^https:\/\/payments\.fake\.test\/public\/receipt\/[0-9a-f]{32}$/);
    expect(fake.refund(id)).toMatchObject({ amount: 20.05 });
    expect(codeOf(() => fake.refund(id, 0.01))).toEqual(['O-409', 409]);
    await fake.idle();
    const secondary = sent.slice(1).map((n) => parseNotification(n));
    expect(secondary.map((n) => [n.kind, n.method, n.amount])).toEqual([
      ['secondary', 'capture', 30.1],
      ['secondary', 'refund', 10.05],
      ['secondary', 'refund', 20.05],
    ]);
    // 4.3: re-send the latest refund.
    expect(fake.resend(fake.project.posId, auth.order_id as string, 'refund')).toMatchObject({
      amount: 20.05,
    });
  });

  it('voids an uncaptured auth once, and answers N-404 for unknown payments and orders', () => {
    const { fake } = setup();
    const auth = pay(fake, { method: 'auth' });
    expect(fake.void(auth.payment_id as string)).toMatchObject({
      method: 'void',
      amount: 100,
      status: 'success',
    });
    expect(codeOf(() => fake.void(auth.payment_id as string))).toEqual(['O-409', 409]);
    expect(codeOf(() => fake.capture('nope'))).toEqual(['N-404', 404]);
    expect(codeOf(() => fake.resend(fake.project.posId, 'missing', 'purchase'))).toEqual(['N-404', 404]);
    expect(codeOf(() => fake.resend(fake.project.posId, auth.order_id as string, 'purchase'))).toEqual([
      'N-404',
      404,
    ]);
  });

  it('gives the same ids for the same seed', () => {
    const a = setup().fake;
    const b = setup().fake;
    expect(a.project).toEqual(b.project);
    expect(pay(a, { order_id: 'same' }).payment_id).toBe(pay(b, { order_id: 'same' }).payment_id);
  });
});

describe('FakeService webhook delivery faults', () => {
  it('retries a non-2xx answer and a network failure on the retry schedule of the fake clock', async () => {
    const { fake } = setup({ retrySchedule: [60_000, 600_000] }, [500, 0, 204]);
    pay(fake, { order_id: 'retry-1' });
    await fake.idle();
    expect(fake.deliveries.map((d) => [d.attempt, d.status, d.ok])).toEqual([[1, 500, false]]);
    await fake.clock.advanceBy(59_999);
    expect(fake.deliveries).toHaveLength(1);
    await fake.clock.advanceBy(1);
    expect(fake.deliveries[1]).toMatchObject({
      attempt: 2,
      ok: false,
      error: 'connect ECONNREFUSED 127.0.0.1:9',
    });
    await fake.clock.advanceBy({ minutes: 10 });
    expect(fake.deliveries.map((d) => [d.attempt, d.status, d.at.toISOString()])).toEqual([
      [1, 500, '2026-04-01T08:00:00.000Z'],
      [2, undefined, '2026-04-01T08:01:00.000Z'],
      [3, 204, '2026-04-01T08:11:00.000Z'],
    ]);
    expect(new Set(fake.deliveries.map((d) => d.webhookId)).size).toBe(1);
  });

  it('stops after the last retry', async () => {
    const { fake } = setup({ retrySchedule: [1_000] }, [503, 503, 503]);
    pay(fake);
    await fake.clock.advanceBy({ days: 1 });
    expect(fake.deliveries.map((d) => d.status)).toEqual([503, 503]);
  });

  it('delays webhooks until the clock passes the delay', async () => {
    const { fake } = setup();
    fake.setDeliveryFaults({ delayMs: 30_000 });
    pay(fake);
    await fake.idle();
    expect(fake.deliveries).toHaveLength(0);
    await fake.clock.advanceBy(30_000);
    expect(fake.deliveries.map((d) => d.at.toISOString())).toEqual(['2026-04-01T08:00:30.000Z']);
  });

  it('refuses to move the clock backwards', async () => {
    const { fake } = setup();
    await expect(fake.clock.advanceTo('2026-03-01T00:00:00Z')).rejects.toThrow(
      '[@payhook/testing] the clock cannot go back from 2026-04-01T08:00:00.000Z to 2026-03-01T00:00:00.000Z.',
    );
  });
});
