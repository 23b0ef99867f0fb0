import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { replyWith, startApiService } from '../../test/api-service.js';
import { type ApiClientOptions, createApiClient } from './api-client.js';
import { ApiError } from './api-errors.js';

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const SECRETS = { apiKey: 'ak_ops', endpointsKey: 'ek_ops_never_shown', apiSecret: 'sk_ops_never_shown' };
const AUTH = {
  payment_id: 'p-1',
  order_id: 'o-1',
  method: 'auth',
  amount: 100,
  currency: 'UAH',
  status: 'success',
};
const CAPTURE = {
  operation_id: 'op-1',
  order_id: 'o-1',
  method: 'capture',
  amount: 60,
  currency: 'UAH',
  status: 'success',
};

/** A service that records each body and answers from `answers` in turn. */
async function service(...answers: Array<[number, unknown]>) {
  const bodies: string[] = [];
  const { url, seen } = await startApiService((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      bodies.push(body);
      const [status, answer] = answers.shift() ?? [500, ''];
      replyWith(status, answer)(request, response);
    });
  });
  return { url, seen, bodies };
}

const clientOf = (url: string, more: Partial<ApiClientOptions> = {}) =>
  createApiClient({ baseUrl: url, posId: POS, ...SECRETS, ...more });

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: ApiError) => {
      expect(error).toBeInstanceOf(ApiError);
      return error;
    },
  );
}

describe('createApiClient() secondary operations', () => {
  it('captures with the body public code sends: pos_id, order_id, order_amount, order_currency, charge_amount', async () => {
    const { url, seen, bodies } = await service([200, CAPTURE]);
    const record = await clientOf(url).capture({
      orderId: 'o-1',
      amount: 60,
      currency: 'UAH',
      orderAmount: 100,
    });
    expect(record).toEqual(CAPTURE);
    expect(seen.map((s) => `${s.method} ${s.url} ${s.headers['content-type']}`)).toEqual([
      'POST /api/v1/capture application/json',
    ]);
    expect(bodies).toEqual([
      `{"pos_id":"${POS}","order_id":"o-1","order_amount":100,"order_currency":"UAH","charge_amount":60}`,
    ]);
  });

  it('refunds with refund_amount, reading order_amount with getOperations when not given', async () => {
    const refund = { ...CAPTURE, method: 'refund', amount: 20, status_code: '1004' };
    const { url, seen, bodies } = await service([200, [AUTH, CAPTURE]], [200, refund]);
    expect(await clientOf(url).refund({ orderId: 'o-1', amount: 20, currency: 'UAH' })).toEqual(refund);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET /api/v1/pos/${POS}/orders/o-1`,
      'POST /api/v1/refund',
    ]);
    expect(bodies[1]).toBe(
      `{"pos_id":"${POS}","order_id":"o-1","order_amount":100,"order_currency":"UAH","refund_amount":20}`,
    );
  });

  it('refuses an amount above what is left before sending (api.amount_exceeded), and bad amounts (api.request_invalid)', async () => {
    const { url, seen } = await service([200, [AUTH, CAPTURE]], [200, [AUTH, CAPTURE]]);
    const client = clientOf(url);
    const over = await refusal(client.refund({ orderId: 'o-1', amount: 60.01, currency: 'UAH' }));
    expect(over.code).toBe('api.amount_exceeded');
    expect(over.message).toBe(
      '[@payhook/payments] POST /api/v1/refund not sent: refund_amount 60.01 UAH is more than what is left to refund (60.00); nothing was sent.',
    );
    const twice = await refusal(client.capture({ orderId: 'o-1', amount: 1, currency: 'UAH' }));
    expect(twice.code).toBe('api.amount_exceeded');
    const given = await refusal(
      client.capture({ orderId: 'o-1', amount: 101, currency: 'UAH', orderAmount: 100 }),
    );
    expect(given.code).toBe('api.amount_exceeded');
    const invalid = await refusal(
      client.refund({ orderId: 'o-1', amount: 0.1 + 0.2, currency: 'uah', orderAmount: -1 }),
    );
    expect(invalid.code).toBe('api.request_invalid');
    expect(invalid.violations).toEqual([
      { field: 'refund_amount', code: 'amount.invalid' },
      { field: 'order_amount', code: 'amount.invalid' },
      { field: 'order_currency', code: 'format.currency' },
    ]);
    expect(seen.map((s) => s.method)).toEqual(['GET', 'GET']);
  });

  it('refuses a currency other than the payment one when it read the order', async () => {
    const { url } = await service([200, [AUTH]]);
    const error = await refusal(clientOf(url).capture({ orderId: 'o-1', amount: 10, currency: 'EUR' }));
    expect(error.violations).toEqual([{ field: 'order_currency', code: 'currency.mismatch' }]);
  });

  it('voids with pos_id, order_id and what was given; split-captures with split', async () => {
    const { url, bodies } = await service([200, { ...CAPTURE, method: 'void' }], [200, CAPTURE]);
    const client = clientOf(url);
    await client.void({ orderId: 'o-2', currency: 'UAH', comment: 'out of stock' });
    const split = [{ amount: 60, sub_merchant_id: '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20' }];
    await client.splitCapture({
      orderId: 'o-3',
      amount: 60,
      currency: 'UAH',
      split,
      serverUrl: 'https://shop/hook',
    });
    expect(bodies).toEqual([
      `{"pos_id":"${POS}","order_id":"o-2","currency":"UAH","comment":"out of stock"}`,
      `{"pos_id":"${POS}","order_id":"o-3","charge_amount":60,"currency":"UAH","server_url":"https://shop/hook","split":${JSON.stringify(split)}}`,
    ]);
  });

  it('answers the service refusal with its code, and api.answer_invalid without a record', async () => {
    const { url } = await service(
      [409, { message: 'Nothing to void', args: { code: 'O-409' } }],
      [200, '[]'],
      [200, 'not json'],
    );
    const client = clientOf(url);
    const refused = await refusal(client.void({ orderId: 'o-1' }));
    expect([refused.code, refused.status, refused.serviceCode]).toEqual(['api.refused', 409, 'O-409']);
    expect((await refusal(client.void({ orderId: 'o-1' }))).code).toBe('api.answer_invalid');
    expect((await refusal(client.getOperations('o-1'))).code).toBe('api.answer_invalid');
  });

  it('never retries after a timeout: api.timeout says the outcome is unknown and how to learn it', async () => {
    const { url, seen } = await startApiService(() => {});
    const error = await refusal(
      clientOf(url, { timeoutMs: 50 }).refund({
        orderId: 'o-1',
        amount: 5,
        currency: 'UAH',
        orderAmount: 10,
      }),
    );
    expect(error.code).toBe('api.timeout');
    expect(error.message).toBe(
      '[@payhook/payments] POST /api/v1/refund: no answer within 50 ms. The outcome is unknown: the refund may have been made. Do not send it again (the service shows no idempotency key); learn it with getOperations("o-1") or from its webhook.',
    );
    expect(seen).toHaveLength(1);
  });
});

describe("createApiClient({ authForm: 'secret' })", () => {
  it('sends X-API-AUTH as <WORD> <API_KEY>:<API_SECRET>, the form the vendor plugins send', async () => {
    const { url, seen } = await service([200, [AUTH]]);
    await clientOf(url, { authForm: 'secret', authScheme: 'ABCD' }).getOperations('o-1');
    expect(seen[0]!.headers['x-api-auth']).toBe(`ABCD ${SECRETS.apiKey}:${SECRETS.apiSecret}`);
  });

  it('keeps the secret out of the error of a 401 that echoes the header', async () => {
    const echo = `Invalid credentials: SVC ${SECRETS.apiKey}:${SECRETS.apiSecret}`;
    const { url } = await service([401, { message: echo, args: { code: 'S-404' } }]);
    const error = await refusal(clientOf(url, { authForm: 'secret' }).getOperations('o-1'));
    expect(error.code).toBe('api.unauthorized');
    expect(`${error.message} ${error.serviceMessage}`).not.toContain(SECRETS.apiSecret);
  });

  it('refuses the secret form over plain http to a host that is not loopback', () => {
    expect(() => clientOf('http://pay.example', { authForm: 'secret' })).toThrow(
      "[@payhook/payments] authForm 'secret' sends the API secret itself in X-API-AUTH: only over https (or to loopback), and baseUrl is plain http to pay.example.",
    );
    expect(() => clientOf('https://pay.example', { authForm: 'secret' })).not.toThrow();
    expect(() => clientOf('http://pay.example')).not.toThrow();
  });

  it('refuses an unknown form and the secret form without apiSecret', () => {
    expect(() => clientOf('http://127.0.0.1:1', { authForm: 'plain' as 'hmac' })).toThrow(/authForm must be/);
    expect(() =>
      createApiClient({
        baseUrl: 'http://127.0.0.1:1',
        posId: POS,
        apiKey: 'k',
        endpointsKey: 'e',
        signRequest: () => 's',
        authForm: 'secret',
      }),
    ).toThrow("authForm 'secret' sends <authScheme> <API_KEY>:<API_SECRET>: it needs apiSecret.");
  });
});
