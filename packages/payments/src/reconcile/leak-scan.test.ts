import type { IncomingMessage, ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { rejected } from '../../test/api-rejection.js';
import { startApiService } from '../../test/api-service.js';
import { CUSTOMER, PURCHASE, SUB_MERCHANT_ID } from '../../test/payment-requests.js';
import { createApiClient } from './api-client.js';
import type { ApiError } from './api-errors.js';

// A scan of every error createPayment, createSplitPayment and the operations (capture, void, refund, status) throw: no key, secret, signature or card value in its
// message, its fields, its cause or how Node prints it, even when the service echoes all of them back.

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const CREDENTIALS = {
  apiKey: 'AK_scan_51c8',
  endpointsKey: 'EK_scan_77d2',
  apiSecret: 'SK_scan_secret_9b04',
};
const PAN = '4111111111111111';
const CVV = '9071';
const TOKEN = 'rcr:tok_scan_5e1d0c9b';
const CARD = { cc_number: PAN, exp_month: 12, exp_year: 2031, card_cvv: CVV };
const SPLIT = {
  ...PURCHASE,
  ...CUSTOMER,
  order_3ds_bypass: 'supported',
  split: [{ amount: 12.5, sub_merchant_id: SUB_MERCHANT_ID }],
};

/** Every value that must never be shown, with the spellings a service's echo might use. */
function secrets(signatures: readonly string[]): string[] {
  const grouped = PAN.replace(/(\d{4})(?=\d)/g, '$1 ');
  return [
    ...Object.values(CREDENTIALS),
    PAN,
    grouped,
    PAN.replace(/ /g, '-'),
    CVV,
    TOKEN,
    TOKEN.slice(4),
    ...signatures.flatMap((signature) => [signature, signature.slice(0, 16)]),
  ];
}

/** What a user may see of an error: its text, fields and cause, as printed, without the stack's file:line frames. */
function shown(error: ApiError): string {
  const printed = inspect(error, { depth: 5 })
    .split('\n')
    .filter((line) => !/^\s+at /.test(line))
    .join('\n');
  return [error.message, String(error), JSON.stringify(error), printed].join('\n');
}

/** A service that echoes the whole request, credentials and card, everywhere an error body has room. */
function echoing(status: number, signatures: string[]) {
  return (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      const auth = String(request.headers['x-api-auth']);
      signatures.push(auth.split(':')[1] ?? '');
      const key = String(request.headers['x-api-key']);
      const sent = JSON.parse(body || '{}') as Record<string, unknown>;
      const echo = `${auth} ${key} ${CREDENTIALS.apiSecret} ${body}`;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          message: `Refused ${String(sent.card_cvv)} ${String(sent.cc_number).replace(/(\d{4})/g, '$1 ')}: ${echo}`,
          args: {
            code: `${sent.cc_number}`,
            violations: [
              { field: `cc_number=${sent.cc_number}`, code: `cvv ${sent.card_cvv}`, message: echo },
              { field: 'cc_token', code: `${sent.cc_token} ${auth}` },
            ],
          },
        }),
      );
    });
  };
}

function expectNothingSecret(error: ApiError, signatures: readonly string[]): void {
  const text = shown(error).toLowerCase();
  for (const secret of secrets(signatures)) {
    expect(text, `${error.code} shows ${secret}`).not.toContain(secret.toLowerCase());
  }
  // Not even one group of the card number.
  const groups = new Set(text.match(/\b\d{4}\b/g));
  expect(
    ['4111', '1111'].filter((group) => groups.has(group)),
    `${error.code}: ${text}`,
  ).toEqual([]);
}

describe('createPayment and createSplitPayment errors', () => {
  it.each([400, 401, 404, 409, 422, 500, 503])(
    'show no credential, signature or card value when the service echoes them all in a %i',
    async (status) => {
      const signatures: string[] = [];
      const { url } = await startApiService(echoing(status, signatures));
      const client = createApiClient({ baseUrl: url, posId: POS, ...CREDENTIALS });
      const errors = [
        await rejected(client.createPayment({ ...PURCHASE, ...CARD })),
        await rejected(client.createPayment({ ...PURCHASE, cc_token: TOKEN })),
        await rejected(client.createSplitPayment({ ...SPLIT, ...CARD })),
      ];
      expect(errors.map((error) => error.status)).toEqual([status, status, status]);
      expect(signatures).toHaveLength(3);
      for (const error of errors) expectNothingSecret(error, signatures);
    },
  );

  it('show no card value when the client refuses a request before sending it', async () => {
    const secure = createApiClient({ baseUrl: 'https://pay.example', posId: POS, ...CREDENTIALS });
    const plain = createApiClient({ baseUrl: 'http://pay.example', posId: POS, ...CREDENTIALS });
    const luhn = `${PAN.slice(0, -1)}2`;
    const errors = [
      await rejected(plain.createPayment({ ...PURCHASE, ...CARD })),
      await rejected(plain.createPayment({ ...PURCHASE, cc_token: TOKEN })),
      await rejected(secure.createPayment({ ...PURCHASE, ...CARD, cc_number: luhn, card_cvv: `${CVV}x` })),
      await rejected(
        secure.createPayment({ ...PURCHASE, ...CARD, cc_token: TOKEN, cc_cvv: CVV, exp_year: 2001 }),
      ),
      await rejected(secure.createPayment({ ...PURCHASE, ...CARD, mode: 'hosted', amount: 1.001 })),
      await rejected(secure.createSplitPayment({ ...SPLIT, ...CARD, split: [] })),
    ];
    expect(errors.map((error) => error.code)).toEqual([
      'api.insecure_transport',
      'api.insecure_transport',
      'api.request_invalid',
      'api.request_invalid',
      'api.request_invalid',
      'api.request_invalid',
    ]);
    for (const error of errors) expectNothingSecret(error, []);
    // The Luhn failure is named by field, and its number is not shown either.
    expect(errors[2]!.violations).toContainEqual({ field: 'cc_number', code: 'card.luhn' });
    expect(shown(errors[2]!)).not.toContain(luhn);
  });

  it('show no card value after a timeout', async () => {
    const { url } = await startApiService(() => {});
    const client = createApiClient({ baseUrl: url, posId: POS, ...CREDENTIALS, timeoutMs: 50 });
    const error = await rejected(client.createPayment({ ...PURCHASE, ...CARD }));
    expect(error.code).toBe('api.timeout');
    expectNothingSecret(error, []);
  });
});

describe('capture, void, refund, splitCapture and getOperations errors', () => {
  it.each([
    [400, 'hmac'],
    [401, 'hmac'],
    [401, 'secret'],
    [404, 'secret'],
    [409, 'hmac'],
    [422, 'secret'],
    [500, 'hmac'],
  ] as const)(
    'show no credential or signature when the service echoes them all in a %i (authForm %s)',
    async (status, authForm) => {
      const signatures: string[] = [];
      const { url } = await startApiService(echoing(status, signatures));
      const client = createApiClient({ baseUrl: url, posId: POS, ...CREDENTIALS, authForm });
      const order = { orderId: 'o-1', currency: 'UAH' };
      const split = [{ amount: 5, sub_merchant_id: SUB_MERCHANT_ID }];
      const errors = [
        await rejected(client.capture({ ...order, amount: 5, orderAmount: 10 })),
        await rejected(client.refund({ ...order, amount: 5, orderAmount: 10 })),
        await rejected(client.void(order)),
        await rejected(client.splitCapture({ ...order, amount: 5, split })),
        await rejected(client.getOperations('o-1')),
        await rejected(client.refund({ ...order, amount: 5 })),
      ];
      expect(errors.map((error) => error.status)).toEqual(Array(6).fill(status));
      expect(signatures).toHaveLength(6);
      for (const error of errors) expectNothingSecret(error, signatures);
    },
  );

  it('show no credential after a timeout or a refusal before sending', async () => {
    const { url } = await startApiService(() => {});
    const client = createApiClient({
      baseUrl: url,
      posId: POS,
      ...CREDENTIALS,
      authForm: 'secret',
      timeoutMs: 50,
    });
    const errors = [
      await rejected(client.refund({ orderId: 'o-1', amount: 5, currency: 'UAH', orderAmount: 10 })),
      await rejected(client.capture({ orderId: 'o-1', amount: 11, currency: 'UAH', orderAmount: 10 })),
      await rejected(client.capture({ orderId: 'o-1', amount: 1.001, currency: 'UAH', orderAmount: 10 })),
    ];
    expect(errors.map((error) => error.code)).toEqual([
      'api.timeout',
      'api.amount_exceeded',
      'api.request_invalid',
    ]);
    for (const error of errors) expectNothingSecret(error, []);
  });
});
