import { decodeData } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { handleApiRequest } from './api.js';
import { TEST_CARDS, THREE_DS_CODE } from './outcomes.js';
import { FakeService } from './service.js';
import type { WebhookMessage } from './transport.js';

let orders = 0;

function setup() {
  const sent: Array<Record<string, unknown>> = [];
  const fake = new FakeService({
    secret: 'checkout-secret',
    now: '2026-05-05T12:00:00Z',
    seed: 5,
    merchantName: 'Tea shop',
    transport: async (message: WebhookMessage) => {
      sent.push(decodeData(message.data) as Record<string, unknown>);
      return { status: 200, body: '' };
    },
  });
  const created = fake.createPayment({
    pos_id: fake.project.posId,
    mode: 'hosted',
    method: 'purchase',
    amount: 349.5,
    currency: 'UAH',
    description: 'Teapot',
    order_id: `checkout-${++orders}`,
    server_url: 'http://127.0.0.1:9/webhooks',
    result_url: 'https://shop.test/thanks',
  });
  if (created.mode !== 'hosted') throw new Error('expected hosted');
  const { checkoutId, record } = fake.payment(created.paymentId)!;
  const post = (body: string, path = 'form') =>
    handleApiRequest(fake, {
      method: 'POST',
      url: `/api/v1/checkout/${checkoutId}/${path}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
  const get = (query = '', path = 'form') =>
    handleApiRequest(fake, {
      method: 'GET',
      url: `/api/v1/checkout/${checkoutId}/${path}${query}`,
      headers: {},
      body: '',
    });
  return { fake, sent, checkoutId, orderId: record.order_id, post, get };
}

const card = (number: string, extra: Record<string, string> = {}) =>
  new URLSearchParams({
    cc_number: number,
    exp: '12/30',
    cvv: '123',
    cardholder: 'Ada',
    ...extra,
  }).toString();

describe('the hosted checkout over HTTP', () => {
  it('checks a posted card again on the server: 400, the form again with each error, nothing settled or sent', async () => {
    const { fake, sent, post, orderId } = setup();
    const refused = post(card('4242424242424241', { exp: '04/26', cvv: '12a', cardholder: ' ' }));
    expect(refused.status).toBe(400);
    expect(refused.headers['content-type']).toBe('text/html; charset=utf-8');
    const errors = [
      ...refused.body.matchAll(/<p class="error" id="([a-z_]+)-error" aria-live="polite">([^<]*)<\/p>/g),
    ];
    expect(errors.map(([, field, message]) => [field, message])).toEqual([
      ['cc_number', 'This card number is not valid.'],
      ['exp', 'This card has expired.'],
      ['cvv', 'The CVV is 3 or 4 digits.'],
      ['cardholder', 'Enter the name on the card.'],
    ]);
    expect(refused.body).toContain('value="4242424242424241"');
    expect(post('cc_number=&exp=13%2F30&cvv=&cardholder=A').body).toMatch(
      /Enter the card number\.[\s\S]*Enter the expiry date as MM\/YY\.[\s\S]*Enter the CVV\./,
    );
    await fake.idle();
    expect(sent).toEqual([]);
    expect(fake.paymentByOrder(orderId)!.record.status).toBe('init');
  });

  it('pays a valid card typed with spaces and redirects to result_url; the card decides the outcome', async () => {
    const paid = setup();
    expect(paid.post(card('4242 4242 4242 4242'))).toEqual({
      status: 303,
      headers: { location: 'https://shop.test/thanks' },
      body: '',
    });
    const declined = setup();
    expect(declined.post(card(TEST_CARDS.decline)).status).toBe(303);
    const poor = setup();
    expect(poor.post(card(TEST_CARDS.insufficientFunds)).status).toBe(303);
    await Promise.all([paid.fake.idle(), declined.fake.idle(), poor.fake.idle()]);
    expect(paid.sent.map((n) => [n.status, n.status_code, n.cc_mask])).toEqual([
      ['success', '1000', '424242******4242'],
    ]);
    expect(declined.sent.map((n) => [n.status, n.status_code, n.limit_info])).toEqual([
      ['failure', '2000', { retry_after: '2026-05-06T12:00:00', description: 'Daily card limit exceeded' }],
    ]);
    expect(poor.sent.map((n) => [n.status, n.status_code, n.status_description, n.limit_info])).toEqual([
      ['failure', '2001', 'Transaction declined: insufficient funds', undefined],
    ]);
  });

  it('sends a 3DS card to the challenge; the code decides, and the form then refuses another card', async () => {
    const { fake, sent, post, get, checkoutId } = setup();
    const challenged = post(card(TEST_CARDS.threeDs));
    expect(challenged.headers.location).toBe(`${fake.baseUrl}/api/v1/checkout/${checkoutId}/3ds`);
    expect(get('', '3ds').body).toContain('<label for="code">Verification code</label>');
    expect(get('', 'form').body).toContain('<h2>Confirm it is you</h2>');
    expect([post(card(TEST_CARDS.success)).status]).toEqual([409]);
    expect(post(`code=${THREE_DS_CODE}`, '3ds').headers.location).toBe('https://shop.test/thanks');
    await fake.idle();
    expect(sent.map((n) => [n.status, n.status_code, n.eci ?? null])).toEqual([
      ['pending', '2122', null],
      ['success', '1000', '05'],
    ]);
    expect(get().body).toContain('The payment status is success.');
  });

  it('fails 3DS on any other code, and refuses a code before a card asked for one', async () => {
    const early = setup();
    expect(() => early.fake.confirmThreeDs(early.checkoutId, THREE_DS_CODE)).toThrow(
      expect.objectContaining({ name: 'FakeServiceError', code: 'C-409', status: 409 }),
    );
    const { fake, sent, post } = setup();
    post(card(TEST_CARDS.threeDs));
    expect(post('code=654321', '3ds').status).toBe(303);
    await fake.idle();
    expect(sent.map((n) => n.status_code)).toEqual(['2122', '2123']);
  });

  it('pays with a wallet button: payway names the wallet and a token is issued; setOutcome still decides', async () => {
    const { fake, sent, post } = setup();
    expect(post('wallet=google_pay').status).toBe(303);
    await fake.idle();
    expect(sent.map((n) => [n.status, n.payway, typeof n.cc_token])).toEqual([
      ['success', 'google_pay', 'string'],
    ]);
    const declined = setup();
    declined.fake.setOutcome({ orderId: declined.orderId }, 'decline');
    declined.post('wallet=apple_pay');
    await declined.fake.idle();
    expect(declined.sent.map((n) => [n.status, n.payway])).toEqual([['failure', 'apple_pay']]);
    expect(setup().post('wallet=paypal').status).toBe(400);
  });

  it('keeps the shortcuts: action= settles without a card, and ?shortcuts=1 shows their buttons', async () => {
    const { fake, sent, post, get } = setup();
    expect(get().body).not.toContain('name="action"');
    expect(get('?shortcuts=1').body).toContain(
      '<button type="submit" name="action" value="decline" id="decline">',
    );
    expect(post('action=nope').status).toBe(400);
    expect(post('action=decline').headers.location).toBe('https://shop.test/thanks');
    await fake.idle();
    expect(sent.map((n) => n.status_code)).toEqual(['2000']);
    expect(post('action=pay').status).toBe(409);
  });

  it('shows the merchant name and the amount in minor units', () => {
    const { get } = setup();
    const body = get().body;
    expect(body).toContain('<span id="merchant">Tea shop</span>');
    expect(body).toContain('<h1 id="amount">349.50 UAH</h1>');
    expect(body).toContain('data-now="2026-05"');
  });
});
