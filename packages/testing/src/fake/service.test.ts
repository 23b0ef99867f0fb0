import { decodeData, parseNotification, verifySignature } from '@payhook/core';
import { CUSTOMER_FIELDS } from '@payhook/payments';
import { describe, expect, it } from 'vitest';
import { handleApiRequest } from './api.js';
import { FakeServiceError } from './errors.js';
import { TEST_CARDS } from './outcomes.js';
import { FakeService } from './service.js';
import type { WebhookMessage } from './transport.js';
import type { FakeServiceOptions } from './types.js';

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

/** The status and the violations (field, code) of the refusal `fn` throws. */
function refusalOf(fn: () => unknown): [number, string[][]] {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof FakeServiceError)) throw error;
    return [error.status, error.violations.map((v) => [v.field, v.code])];
  }
  throw new Error('expected a refusal');
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

  it("echoes the request's customer details, description and result_url in the payment record (2.1)", () => {
    const customer = {
      customer_id: 'c-1',
      customer_ip: '203.0.113.7',
      customer_fname: 'Olena',
      customer_lname: 'Shevchenko',
      customer_patronym: 'Petrivna',
      customer_email: 'olena@example.com',
      customer_phone: '+380501234567',
      customer_country: 'UA',
      customer_birthday: '1990-01-31',
    };
    const record = pay(setup().fake, { ...customer, result_url: 'https://shop.example/done' });
    expect(record).toMatchObject({
      ...customer,
      description: 'Engine',
      result_url: 'https://shop.example/done',
    });
    expect(Object.keys(customer).sort()).toEqual([...CUSTOMER_FIELDS].sort());
    expect(record).not.toHaveProperty('cc_number');
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

  it('gives the same credentials for the same seed, and the same ids only with fixedIds', () => {
    const a = setup({ fixedIds: true }).fake;
    const b = setup({ fixedIds: true }).fake;
    expect(a.project).toEqual(b.project);
    expect(pay(a, { order_id: 'same' }).payment_id).toBe(pay(b, { order_id: 'same' }).payment_id);
    const c = setup().fake;
    const d = setup().fake;
    expect(c.project).toEqual(a.project);
    expect(pay(c, { order_id: 'same' }).payment_id).not.toBe(pay(d, { order_id: 'same' }).payment_id);
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

  it('releases held webhooks newest first, the copies of each in their order', async () => {
    const answers = new Map<string, number>();
    const fake = new FakeService({
      secret: SECRET,
      now: '2026-04-01T08:00:00Z',
      seed: 31,
      transport: async (message: WebhookMessage) => {
        const seen = answers.get(message.data) ?? 0;
        answers.set(message.data, seen + 1);
        return {
          status: 200,
          body: JSON.stringify({ ok: true, outcome: seen === 0 ? 'handled' : 'duplicate' }),
        };
      },
    });
    fake.outbox.pause();
    fake.setDeliveryFaults({ duplicate: 1 });
    pay(fake, { order_id: 'held-1' });
    fake.setDeliveryFaults({});
    pay(fake, { order_id: 'held-2' });
    await fake.outbox.resume({ reverse: true });
    expect(fake.deliveries.map((d) => [d.notification.order_id, d.duplicate])).toEqual([
      ['held-2', false],
      ['held-1', false],
      ['held-1', true],
    ]);
    expect(fake.outbox.unexpectedDuplicates()).toEqual([]);
  });

  it('reports a duplicate answer only for the first arrival of a notification, whichever copy or re-send it was', async () => {
    const remembered = new Set<string>();
    const fake = new FakeService({
      secret: SECRET,
      now: '2026-04-01T08:00:00Z',
      seed: 31,
      transport: async (message: WebhookMessage) => {
        const n = decodeData(message.data) as { payment_id: string; status: string };
        const key = `${n.payment_id}:${n.status}`;
        const outcome = remembered.has(key) ? 'duplicate' : 'handled';
        remembered.add(key);
        return { status: 200, body: JSON.stringify({ ok: true, outcome }) };
      },
    });
    // The original is late; the re-send overtakes it and is the first the receiver sees.
    fake.setDeliveryFaults({ delayMs: 60_000 });
    pay(fake, { order_id: 'overtaken-1' });
    fake.setDeliveryFaults({});
    fake.resend(fake.project.posId, 'overtaken-1', 'purchase');
    await fake.clock.advanceBy(60_000);
    expect(fake.deliveries.map((d) => [d.webhookId, JSON.parse(d.body!).outcome])).toEqual([
      [2, 'handled'],
      [1, 'duplicate'],
    ]);
    expect(fake.outbox.unexpectedDuplicates()).toEqual([]);
    // A receiver that remembers a notification none of whose attempts reached it is reported.
    fake.outbox.pause();
    const remembered1 = pay(fake, { order_id: 'remembered-1' });
    remembered.add(`${remembered1.payment_id}:success`);
    await fake.outbox.resume();
    expect(fake.outbox.unexpectedDuplicates()).toEqual([
      expect.stringMatching(
        /^webhook #3 \(purchase success, order remembered-1, payment [0-9a-f-]+\) to http:\/\/127\.0\.0\.1:9\/webhooks was sent for the first time and answered "duplicate"/,
      ),
    ]);
  });

  it('refuses to move the clock backwards', async () => {
    const { fake } = setup();
    await expect(fake.clock.advanceTo('2026-03-01T00:00:00Z')).rejects.toThrow(
      '[@payhook/testing] the clock cannot go back from 2026-04-01T08:00:00.000Z to 2026-03-01T00:00:00.000Z.',
    );
  });
});

function hosted(fake: FakeService, overrides: Record<string, unknown> = {}) {
  const created = fake.createPayment({
    pos_id: fake.project.posId,
    mode: 'hosted',
    method: 'purchase',
    amount: 40,
    currency: 'XTS',
    description: 'Hosted',
    order_id: `order-${++orders}`,
    server_url: 'http://127.0.0.1:9/webhooks',
    ...overrides,
  });
  if (created.mode !== 'hosted') throw new Error('expected hosted');
  const view = fake.payment(created.paymentId)!;
  return { ...created, checkoutId: view.checkoutId, orderId: view.record.order_id as string };
}

const page = (fake: FakeService, method: string, url: string, body = '') =>
  handleApiRequest(fake, {
    method,
    url: url.replace(fake.baseUrl, ''),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });

describe('the fake follows the spec where it shows a value, and is never stricter than the service', () => {
  it('sends refund webhooks with 1000 (spec 3.1) and answers the refund with 1004; 1004 webhooks on request', async () => {
    for (const [option, webhookCode] of [
      [undefined, '1000'],
      ['1004', '1004'],
    ] as const) {
      const { fake, sent } = setup(option === undefined ? {} : { refundWebhookCode: option });
      const record = pay(fake);
      const answer = fake.refund(record.payment_id as string, 25);
      await fake.idle();
      expect([answer.status_code, answer.status_description]).toEqual(['1004', 'Refund successful']);
      expect(sent.map((n) => [n.method, n.status, n.status_code])).toEqual([
        ['purchase', 'success', '1000'],
        ['refund', 'success', webhookCode],
      ]);
      expect(fake.payment(record.payment_id as string)!.operations[0]!.status_code).toBe(webhookCode);
    }
  });

  it('applies splitSum to split purchases (ignore by default, equal when strict)', () => {
    const split = (fake: FakeService) => () =>
      fake.createPayment(
        {
          pos_id: fake.project.posId,
          mode: 'hosted',
          method: 'purchase',
          amount: 100,
          currency: 'XTS',
          description: 'Split',
          order_id: `order-${++orders}`,
          order_3ds_bypass: 'supported',
          customer_email: 'a@example.com',
          customer_phone: '+380501234567',
          split: [{ amount: 70, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' }],
        },
        { split: true },
      );
    expect(codeOf(split(setup().fake))).toBeUndefined();
    expect(codeOf(split(setup({ strict: true }).fake))).toEqual(['V-400', 400]);
    expect(codeOf(split(setup({ splitSum: 'equal' }).fake))).toEqual(['V-400', 400]);
    expect(codeOf(split(setup({ strict: true, splitSum: 'at_most' }).fake))).toBeUndefined();
    expect(codeOf(split(setup({ strict: true, splitSum: 'ignore' }).fake))).toBeUndefined();
  });

  describe.each([
    ['a /payment without description', { description: undefined }, [['description', 'required']]],
    ['a /payment without currency', { currency: undefined }, [['currency', 'required']]],
    ['a card number with spaces', { cc_number: '4242 4242 4242 4242' }, [['cc_number', 'card.format']]],
    [
      'init_recurring with auth',
      { method: 'auth', init_recurring: { interval_unit: 'month', interval_count: 1 } },
      [['method', 'recurring.method']],
    ],
  ])('%s (not shown by the spec)', (_, change, violations) => {
    const attempt = (fake: FakeService) => () => pay(fake, change);
    it('is accepted by default', () => {
      expect(codeOf(attempt(setup().fake))).toBeUndefined();
    });
    it('is refused with strict: true, with the violation core names', () => {
      expect(refusalOf(attempt(setup({ strict: true }).fake))).toEqual([400, violations]);
    });
  });

  it('still refuses a split purchase without description or currency: spec 4.2 requires them', () => {
    const { fake } = setup();
    const refusal = refusalOf(() =>
      fake.createPayment(
        {
          pos_id: fake.project.posId,
          mode: 'hosted',
          method: 'purchase',
          amount: 100,
          order_id: `order-${++orders}`,
          order_3ds_bypass: 'supported',
          customer_email: 'a@example.com',
          customer_phone: '+380501234567',
          split: [{ amount: 100, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' }],
        },
        { split: true },
      ),
    );
    expect(refusal).toEqual([
      400,
      [
        ['currency', 'required'],
        ['description', 'required'],
      ],
    ]);
  });

  it('reads a card number with spaces as its digits, and gives a payment without currency UAH', async () => {
    const { fake, sent } = setup();
    const record = pay(fake, { cc_number: '4242 4242 4242 4242', currency: undefined });
    await fake.idle();
    expect(record.cc_mask).toBe('424242******4242');
    expect(record.currency).toBe('UAH');
    expect(sent.map((n) => n.currency)).toEqual(['UAH']);
  });

  it('ignores card fields on a hosted request by default, and refuses them with strict: true', () => {
    const hosted = (fake: FakeService) => () =>
      fake.createPayment({
        pos_id: fake.project.posId,
        mode: 'hosted',
        method: 'purchase',
        amount: 10,
        currency: 'UAH',
        description: 'Hosted',
        order_id: `order-${++orders}`,
        cc_number: '4242424242424242',
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
      });
    const { fake } = setup();
    const created = hosted(fake)();
    expect(created.mode).toBe('hosted');
    const paymentId = (created as { paymentId: string }).paymentId;
    expect(fake.payment(paymentId)!.record).not.toHaveProperty('cc_mask');
    expect(codeOf(hosted(setup({ strict: true }).fake))).toEqual(['V-400', 400]);
  });

  it('accepts a wallet payment whose cryptogram replaces the card, and any order_3ds_bypass string', async () => {
    const { fake, sent } = setup();
    const record = pay(fake, {
      cc_number: undefined,
      exp_month: undefined,
      exp_year: undefined,
      card_cvv: undefined,
      cryptogram: { type: 'google_pay', token: 'eyJzaWduYXR1cmUiOiJ4In0' },
      order_3ds_bypass: 'frictionless',
    });
    await fake.idle();
    expect(record).toMatchObject({ status: 'success', status_code: '1000', options_3ds: 'frictionless' });
    expect(record).not.toHaveProperty('cryptogram');
    expect(sent.map((n) => n.status)).toEqual(['success']);
  });

  it('echoes a numeric merchant_mcc as its 4 digits, 5999 only when none was sent', () => {
    const { fake } = setup();
    expect(pay(fake, { merchant_mcc: 5411 }).mcc).toBe('5411');
    expect(pay(fake, { merchant_mcc: 742 }).mcc).toBe('0742');
    expect(pay(fake, { merchant_mcc: '4814' }).mcc).toBe('4814');
    expect(pay(fake).mcc).toBe('5999');
  });

  it('serves the receipt_url of a payment and of a refund; an unknown receipt is 404', () => {
    const { fake } = setup();
    const record = pay(fake, { order_id: 'order-receipt' });
    const refund = fake.refund(record.payment_id as string, 10);
    const paid = page(fake, 'GET', record.receipt_url as string);
    expect([paid.status, paid.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(paid.body).toContain('<tr><th>Order</th><td>order-receipt</td></tr>');
    expect(paid.body).toContain('<tr><th>Amount</th><td>100.00 XTS</td></tr>');
    const refunded = page(fake, 'GET', refund.receipt_url as string);
    expect(refunded.body).toContain('<tr><th>Operation</th><td>refund</td></tr>');
    expect(refunded.body).toContain('<tr><th>Amount</th><td>10.00 XTS</td></tr>');
    expect(page(fake, 'GET', `${fake.baseUrl}/public/receipt/unknown`).status).toBe(404);
  });

  it('answers a re-send before the hosted checkout with the record and sends no webhook', async () => {
    const { fake, sent } = setup();
    const { orderId } = hosted(fake);
    expect(fake.resend(fake.project.posId, orderId, 'purchase')).toMatchObject({ status: 'init' });
    await fake.idle();
    expect(sent).toEqual([]);
  });

  it('expires an unpaid hosted payment at order_timeout on the fake clock: a failure webhook, a 410 page', async () => {
    const { fake, sent } = setup();
    const { checkoutId, orderId } = hosted(fake, { order_timeout: 900 });
    const paidInTime = hosted(fake, { order_timeout: 900 });
    fake.completeCheckout(paidInTime.checkoutId, 'pay');
    await fake.clock.advanceBy(899_000);
    expect(page(fake, 'GET', fake.checkoutUrl(checkoutId)).status).toBe(200);
    await fake.clock.advanceBy(1_000);
    expect(sent.map((n) => [n.order_id, n.status, n.status_code, n.processed_at])).toEqual([
      [paidInTime.orderId, 'success', '1000', '2026-04-01T08:00:00'],
      [orderId, 'failure', '2124', '2026-04-01T08:15:00'],
    ]);
    const shown = page(fake, 'GET', fake.checkoutUrl(checkoutId));
    expect([shown.status, shown.body.includes('<h2>This payment has expired</h2>')]).toEqual([410, true]);
    expect(page(fake, 'POST', fake.checkoutUrl(checkoutId), 'action=pay').status).toBe(410);
    expect(codeOf(() => fake.completeCheckout(checkoutId, 'pay'))).toEqual(['C-410', 410]);
    const noTimeout = hosted(fake);
    await fake.clock.advanceBy({ days: 30 });
    expect(sent).toHaveLength(2);
    expect(fake.checkout(noTimeout.checkoutId)).toMatchObject({ open: true, expired: false });
  });
});
