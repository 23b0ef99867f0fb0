import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { rejected } from '../../test/api-rejection.js';
import { replyWith, startApiService } from '../../test/api-service.js';
import { CUSTOMER, PURCHASE, SUB_MERCHANT_ID } from '../../test/payment-requests.js';
import { createApiClient } from './api-client.js';
import { ApiError } from './api-errors.js';
import { prepareCreate } from './create-payment.js';

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const SECRETS = { apiKey: 'ak-create', endpointsKey: 'ek-create', apiSecret: 'secret-create' };
const CARD = { cc_number: '4242424242424242', exp_month: 12, exp_year: 2031, card_cvv: '737' };
const DIRECT = { ...PURCHASE, ...CARD };
const SPLIT = {
  ...DIRECT,
  ...CUSTOMER,
  order_3ds_bypass: 'supported',
  split: [{ amount: 5, sub_merchant_id: SUB_MERCHANT_ID }],
};

function checks(base: string, more: { strict?: boolean; split?: boolean } = {}) {
  return { split: false, posId: POS, base: new URL(base), strict: false, sector: undefined, ...more };
}

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('prepareCreate', () => {
  it.each([
    'https://pay.example/',
    'http://127.0.0.1:8910/',
    'http://127.9.8.7/',
    'http://localhost:3000/',
    'http://[::1]:9/',
  ])('lets card data go to %s', (base) => {
    expect(prepareCreate(DIRECT, checks(base)).body).toBe(JSON.stringify({ pos_id: POS, ...DIRECT }));
  });

  it.each(['http://pay.example/', 'http://10.0.0.1/', 'http://127.0.0.1.example/'])(
    'refuses card data over plain http to %s, naming the fields, not their values',
    (base) => {
      const error = refusal(() => prepareCreate(DIRECT, checks(base)));
      expect(error.code).toBe('api.insecure_transport');
      expect(error.message).toContain('card data (cc_number, card_cvv, exp_month, exp_year)');
      expect(error.message).not.toContain(CARD.cc_number);
    },
  );

  it('refuses a cc_token over plain http too, and lets a request without card data go', () => {
    const token = { ...DIRECT, cc_number: undefined, exp_month: undefined, exp_year: undefined };
    const error = refusal(() =>
      prepareCreate({ ...token, card_cvv: undefined, cc_token: 'rcr:tok-1' }, checks('http://pay.example/')),
    );
    expect([error.code, error.message.includes('rcr:tok-1')]).toEqual(['api.insecure_transport', false]);
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: 'o-2' };
    expect(prepareCreate(hosted, checks('http://pay.example/')).cardValues).toEqual([]);
  });

  it.each([
    ['.', 'order_id.unaskable'],
    ['..', 'order_id.unaskable'],
    ['o\u0000-1', 'order_id.control_character'],
    ['o\u202e-1', 'order_id.control_character'],
  ])('refuses an order_id %j the service could never be asked about (%s)', (orderId, code) => {
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: orderId };
    const error = refusal(() => prepareCreate(hosted, checks('https://pay.example/')));
    expect([error.code, error.violations]).toEqual(['api.request_invalid', [{ field: 'order_id', code }]]);
  });

  it('refuses an order_id over 256 characters before sending it', () => {
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: 'x'.repeat(1_000_000) };
    const error = refusal(() => prepareCreate(hosted, checks('https://pay.example/')));
    expect(error.code).toBe('api.request_invalid');
    expect(error.violations?.map((v) => v.field)).toEqual(['order_id']);
  });

  it('keeps a pos_id the request names and lists the card values to redact', () => {
    const other = '6a1d9b5f-2c3d-4e4f-9a5b-6c7d8e9f0a1b';
    const prepared = prepareCreate({ ...DIRECT, pos_id: other }, checks('https://pay.example/'));
    expect(JSON.parse(prepared.body).pos_id).toBe(other);
    expect(prepared.cardValues).toEqual([CARD.cc_number, CARD.card_cvv]);
  });

  it('accepts at the default level what the fake accepts, and refuses it under strict', () => {
    const spaced = { ...DIRECT, cc_number: '4242 4242 4242 4242' };
    const uneven = { ...SPLIT, split: [{ amount: 5, sub_merchant_id: SPLIT.split[0]!.sub_merchant_id }] };
    expect(() => prepareCreate(spaced, checks('https://pay.example/'))).not.toThrow();
    expect(() => prepareCreate(uneven, checks('https://pay.example/', { split: true }))).not.toThrow();
    const strictCard = refusal(() => prepareCreate(spaced, checks('https://p.example/', { strict: true })));
    expect(strictCard.violations).toEqual([{ field: 'cc_number', code: 'card.format' }]);
    const strictSplit = refusal(() =>
      prepareCreate(uneven, checks('https://p.example/', { strict: true, split: true })),
    );
    expect(strictSplit.violations).toEqual([{ field: 'split', code: 'split.sum_mismatch' }]);
    // A field sent '' is read as not sent, as by the fake; it is sent as given.
    const empty = { ...DIRECT, customer_email: '' };
    expect(JSON.parse(prepareCreate(empty, checks('https://pay.example/')).body).customer_email).toBe('');
    const strictEmpty = refusal(() => prepareCreate(empty, checks('https://p.example/', { strict: true })));
    expect(strictEmpty.violations).toEqual([{ field: 'customer_email', code: 'format.email' }]);
  });
});

describe('createPayment answers', () => {
  const client = (url: string) => createApiClient({ baseUrl: `${url}/base`, posId: POS, ...SECRETS });

  it('POSTs the JSON body signed with the HMAC-SHA256 of the body, and reads a relative Location', async () => {
    const answer = (_request: IncomingMessage, response: ServerResponse) => {
      response.writeHead(303, { location: '/base/api/v1/checkout/ch%201/form' });
      response.end();
    };
    const service = await startApiService(answer);
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: 'o-3' };
    const created = await client(service.url).createPayment(hosted);
    const body = JSON.stringify({ pos_id: POS, ...hosted });
    const signature = createHmac('sha256', SECRETS.apiSecret).update(body).digest('hex');
    expect(created).toEqual({
      kind: 'hosted',
      checkoutUrl: `${service.url}/base/api/v1/checkout/ch%201/form`,
      checkoutId: 'ch 1',
    });
    const [seen] = service.seen;
    expect([seen?.method, seen?.url, seen?.headers['content-type'], seen?.headers['x-api-auth']]).toEqual([
      'POST',
      '/base/api/v1/payment',
      'application/json',
      `SVC-HMAC-SHA256 ak-create:${signature}`,
    ]);
  });

  it.each([301, 302, 307, 308])(
    'refuses a %i (an https upgrade, a login page) as api.answer_invalid: only a 303 is a checkout',
    async (status) => {
      const service = await startApiService((_request, response) => {
        response.writeHead(status, { location: '/base/api/v1/checkout/ch-1/form' });
        response.end();
      });
      const error = await rejected(client(service.url).createPayment(DIRECT));
      expect([error.code, error.status]).toEqual(['api.answer_invalid', status]);
    },
  );

  it.each([
    ['not a URL', 'http://['],
    ['an id that cannot be percent-decoded', '/base/api/v1/checkout/%E0%A4%A/form'],
    ['not a web address', 'javascript:alert(1)'],
  ])('refuses a 303 whose Location is %s as api.answer_invalid', async (_what, location) => {
    const service = await startApiService((_request, response) => {
      response.writeHead(303, { location });
      response.end();
    });
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: 'o-4' };
    const error = await rejected(client(service.url).createPayment(hosted));
    expect([error.code, error.status]).toEqual(['api.answer_invalid', 303]);
    expect(error.message).not.toContain(location);
  });

  it('refuses a 2xx answer that is not a payment record as api.answer_invalid', async () => {
    const service = await startApiService(replyWith(200, { ok: true }));
    const error = await rejected(client(service.url).createPayment(DIRECT));
    expect([error.code, error.status]).toEqual(['api.answer_invalid', 200]);
  });

  it('keeps the card number and CVV out of a service message that echoes them', async () => {
    const echo = { message: `card 4242 4242 4242 4242 cvv 737 refused`, args: { code: 'V-401' } };
    const service = await startApiService(replyWith(422, echo));
    const error = await rejected(client(service.url).createPayment(DIRECT));
    expect([error.code, error.status, error.serviceCode, error.serviceMessage]).toEqual([
      'api.refused',
      422,
      'V-401',
      'card [redacted] cvv [redacted] refused',
    ]);
  });

  it('sends a create that gets no answer once, and says how to learn whether the payment exists', async () => {
    const service = await startApiService(() => {});
    // Long enough for the request to reach the server on a loaded machine (50 ms did not, once): it never answers.
    const slow = createApiClient({ baseUrl: service.url, posId: POS, ...SECRETS, timeoutMs: 1_000 });
    const error = await rejected(slow.createPayment(DIRECT));
    expect([error.code, error.status, service.seen.length]).toEqual(['api.timeout', undefined, 1]);
    expect(error.message).toBe(
      '[@payhook/payments] POST /api/v1/payment: no answer within 1000 ms. The payment may exist: do not create it again; ask with resend({ orderId }) or wait for its webhook.',
    );
  });
});
