import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockPaymentApiOptions, mockPaymentApi, type PaymentApiMock } from '../nock.js';
import { FakeService } from './service.js';

const BASE_URL = 'https://auth.payments.test';
const SECRET = 'webhook-and-api-secret';
const REFUSED = { message: 'Invalid pos_id field or credentials', args: { code: 'S-404' } };

const hmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

describe('X-API-AUTH in the fake: any scheme word, the HMAC form and the secret form', () => {
  let api: PaymentApiMock;

  function start(options: Partial<MockPaymentApiOptions> = {}): PaymentApiMock {
    api = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, seed: 5, ...options });
    return api;
  }

  afterEach(() => api.restore());

  /** A hosted payment with `auth` as X-API-AUTH; answers the status and the body when it is JSON. */
  async function pay(auth: (body: string) => string, order: string): Promise<[number, unknown]> {
    const body = JSON.stringify({
      pos_id: api.project.posId,
      mode: 'hosted',
      method: 'purchase',
      amount: 10,
      currency: 'XTS',
      description: 'Auth',
      order_id: order,
    });
    const response = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'x-api-key': api.project.endpointsKey,
        'x-api-auth': auth(body),
      },
      body,
    });
    return [response.status, response.status === 303 ? undefined : await response.json()];
  }

  it('accepts any word of letters, digits and "-", with or without -HMAC-SHA256', async () => {
    start();
    const key = api.project.apiKey;
    expect(await pay(() => `ABCD ${key}:${SECRET}`, 'w-1')).toEqual([303, undefined]);
    expect(await pay(() => `Pay-2 ${key}:${SECRET}`, 'w-2')).toEqual([303, undefined]);
    expect(await pay((b) => `x9-HMAC-SHA256 ${key}:${hmac(SECRET, b)}`, 'w-3')).toEqual([303, undefined]);
    expect(await pay((b) => `SVC-HMAC-SHA256 ${key}:${hmac(SECRET, b)}`, 'w-4')).toEqual([303, undefined]);
    expect(await pay((b) => `abcd-hmac-sha256 ${key}:${hmac(SECRET, b)}`, 'w-6')).toEqual([303, undefined]);
    expect(await pay(() => `AB_CD ${key}:${SECRET}`, 'w-5')).toEqual([401, REFUSED]);
    api.done({ expectRefusals: [401] });
  });

  it("accepts the HMAC over METHOD\\nPATH?QUERY\\nBODY (payhook's earlier signer) and over the empty body of a GET", async () => {
    start();
    const key = api.project.apiKey;
    const path = '/api/v1/payment';
    expect(await pay((b) => `ABCD-HMAC-SHA256 ${key}:${hmac(SECRET, `POST\n${path}\n${b}`)}`, 'm-1')).toEqual(
      [303, undefined],
    );
    const resend = `/api/v1/pos/${api.project.posId}/orders/unknown/purchase?callback=true`;
    const get = (signature: string) =>
      fetch(`${BASE_URL}${resend}`, {
        headers: {
          'x-api-key': api.project.endpointsKey,
          'x-api-auth': `ABCD-HMAC-SHA256 ${key}:${signature}`,
        },
      });
    // Past the credentials, the route answers that there is no such order.
    expect((await get(hmac(SECRET, ''))).status).toBe(404);
    expect((await get(hmac(SECRET, `GET\n${resend}\n`))).status).toBe(404);
    expect((await get(hmac(SECRET, 'x'))).status).toBe(401);
    api.done({ expectRefusals: [401, 404] });
  });

  it('checks against apiSecret when the project has one, not the webhook secret', async () => {
    start({ apiSecret: 'separate-api-secret' });
    const key = api.project.apiKey;
    expect(await pay(() => `ABCD ${key}:separate-api-secret`, 'a-1')).toEqual([303, undefined]);
    expect(await pay((b) => `ABCD-HMAC-SHA256 ${key}:${hmac('separate-api-secret', b)}`, 'a-2')).toEqual([
      303,
      undefined,
    ]);
    expect(await pay(() => `ABCD ${key}:${SECRET}`, 'a-3')).toEqual([401, REFUSED]);
    expect(await pay((b) => `ABCD-HMAC-SHA256 ${key}:${hmac(SECRET, b)}`, 'a-4')).toEqual([401, REFUSED]);
    api.done({ expectRefusals: [401] });
  });

  it('with strict and authScheme refuses another word; strict alone or authScheme alone takes any word', async () => {
    start({ strict: true, authScheme: 'ABCD' });
    const key = api.project.apiKey;
    expect(await pay(() => `ABCD ${key}:${SECRET}`, 's-1')).toEqual([303, undefined]);
    expect(await pay((b) => `ABCD-HMAC-SHA256 ${key}:${hmac(SECRET, b)}`, 's-2')).toEqual([303, undefined]);
    expect(await pay(() => `SVC ${key}:${SECRET}`, 's-3')).toEqual([401, REFUSED]);
    expect(api.headers()['x-api-auth']).toBe(`ABCD ${key}:${SECRET}`);
    api.done({ expectRefusals: [401] });
    api.restore();
    start({ strict: true });
    expect(await pay(() => `WXYZ ${api.project.apiKey}:${SECRET}`, 's-4')).toEqual([303, undefined]);
    api.restore();
    start({ authScheme: 'ABCD' });
    expect(await pay(() => `WXYZ ${api.project.apiKey}:${SECRET}`, 's-5')).toEqual([303, undefined]);
  });

  it('refuses an authScheme that is not a word when the fake is built', () => {
    start();
    expect(() => new FakeService({ secret: SECRET, authScheme: 'AB CD' })).toThrow(
      '[@payhook/testing] authScheme must be a word of letters, digits and "-".',
    );
    expect(new FakeService({ secret: SECRET, authScheme: 'ABCD-HMAC-SHA256' }).authScheme).toBe('ABCD');
  });
});
