import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../src/fake/outcomes.js';
import { mockPaymentApi } from '../src/nock.js';
import { assertBuilt, type ServeCredentials, serveCli } from './run-cli.js';

// Requests and a webhook verifier written as public merchant code writes them (docs/assumptions.md, "X-API-AUTH
// in the fake"): plain fetch, headers built by hand, the service's own four-letter word, one secret for both.
const SECRET = 'one-secret-for-requests-and-webhooks';
const WORD = 'ABCD';

/** A merchant's verifier, as the public plugins write it: SHA-1, base64url with its padding, compared as strings. */
function merchantSignature(secret: string, data: string): string {
  return createHash('sha1')
    .update(secret + data + secret)
    .digest('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_');
}

/** The shop's webhook endpoint: 200 when the signature verifies, 400 otherwise; remembers each verdict. */
async function startShop(): Promise<{ server: Server; url: string; verdicts: string[] }> {
  const verdicts: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      const data = form.get('data') ?? '';
      const valid = merchantSignature(SECRET, data) === form.get('signature');
      const order = valid
        ? (JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as { order_id: string })
        : undefined;
      verdicts.push(valid ? `valid ${order!.order_id}` : 'invalid');
      response.writeHead(valid ? 200 : 400).end(valid ? 'OK' : 'bad signature');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, verdicts };
}

function post(baseUrl: string, auth: string, endpointsKey: string, body: string): Promise<Response> {
  return fetch(`${baseUrl}/api/v1/payment`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/json', 'X-API-AUTH': auth, 'X-API-KEY': endpointsKey },
    body,
  });
}

/** (1) A Next.js shop's hosted subscription: the HMAC of the raw JSON body, keyed with the API secret, in hex. */
function nextJsSubscription(baseUrl: string, c: ServeCredentials, shopUrl: string): Promise<Response> {
  const body = JSON.stringify({
    pos_id: c.posId,
    mode: 'hosted',
    method: 'purchase',
    amount: 299,
    currency: 'UAH',
    description: 'Pro plan, monthly',
    order_id: 'sub-1001',
    server_url: shopUrl,
    result_url: 'https://shop.example/account/billing',
    init_recurring: { interval_unit: 'month', interval_count: 1 },
  });
  const hex = createHmac('sha256', SECRET).update(body).digest('hex');
  return post(baseUrl, `${WORD}-HMAC-SHA256 ${c.apiKey}:${hex}`, c.endpointsKey, body);
}

/** (2) A Java shop's direct card payment: the secret itself after the key. */
function javaCardPayment(baseUrl: string, c: ServeCredentials, shopUrl: string): Promise<Response> {
  const body = JSON.stringify({
    pos_id: c.posId,
    mode: 'direct',
    method: 'purchase',
    amount: 1250.0,
    currency: 'UAH',
    description: 'Order 77',
    order_id: 'java-77',
    cc_number: TEST_CARDS.success,
    exp_month: 12,
    exp_year: 2031,
    card_cvv: '123',
    customer_ip: '203.0.113.9',
    server_url: shopUrl,
  });
  return post(baseUrl, `${WORD} ${c.apiKey}:${SECRET}`, c.endpointsKey, body);
}

/** (3) A plugin's hosted purchase: empty optional fields, a float amount, the test currency, a JSON payload. */
function pluginPurchase(baseUrl: string, c: ServeCredentials, shopUrl: string): Promise<Response> {
  const body = JSON.stringify({
    pos_id: c.posId,
    mode: 'hosted',
    method: 'purchase',
    amount: 149.9,
    currency: 'XTS',
    description: 'Order #17',
    order_id: '17',
    order_3ds_bypass: 'supported',
    customer_email: '',
    customer_ip: '',
    customer_country: '',
    customer_fname: 'Olena',
    products: [],
    server_url: shopUrl,
    result_url: 'https://shop.example/?wc-api=payment_result&order_id=17',
    payload: JSON.stringify({ order_id: 17, cart: 'abc' }),
  });
  return post(baseUrl, `${WORD} ${c.apiKey}:${SECRET}`, c.endpointsKey, body);
}

const REFUSED = { message: 'Invalid pos_id field or credentials', args: { code: 'S-404' } };

/** The same checks against one running fake: `start` answers its base URL and the project's credentials. */
function itAcceptsMerchantCode(
  start: (
    shopUrl: string,
  ) => Promise<{ url: string; credentials: ServeCredentials; settle(): Promise<void> }>,
  stop: () => Promise<void>,
) {
  let shop: Awaited<ReturnType<typeof startShop>>;
  let fake: Awaited<ReturnType<typeof start>>;

  beforeAll(async () => {
    shop = await startShop();
    fake = await start(shop.url);
  });

  afterAll(async () => {
    await stop();
    await new Promise((resolve) => shop.server.close(resolve));
  });

  it('answers the three public request forms 303, 200 with the payment record, and 303', async () => {
    const subscription = await nextJsSubscription(fake.url, fake.credentials, shop.url);
    expect(subscription.status).toBe(303);
    expect(subscription.headers.get('location')).toMatch(
      new RegExp(`^${fake.url.replace(/[.]/g, '\\.')}/api/v1/checkout/[^/]+/form$`),
    );
    const card = await javaCardPayment(fake.url, fake.credentials, shop.url);
    expect(card.status).toBe(200);
    expect(await card.json()).toMatchObject({
      order_id: 'java-77',
      pos_id: fake.credentials.posId,
      mode: 'direct',
      method: 'purchase',
      amount: 1250,
      currency: 'UAH',
      status: 'success',
      status_code: '1000',
    });
    const plugin = await pluginPurchase(fake.url, fake.credentials, shop.url);
    expect(plugin.status).toBe(303);
    expect(plugin.headers.get('location')).toMatch(/\/api\/v1\/checkout\/[^/]+\/form$/);
  });

  it("signs its webhooks with SHA-1 so that a merchant's SHA-1 verifier accepts them", async () => {
    await fake.settle();
    await expect.poll(() => shop.verdicts).toEqual(['valid java-77']);
  });

  it('answers 401 S-404 when only the API key, the endpoints key, the HMAC or the secret is wrong', async () => {
    const { apiKey, endpointsKey, posId } = fake.credentials;
    const body = JSON.stringify({
      pos_id: posId,
      mode: 'hosted',
      method: 'purchase',
      amount: 1,
      order_id: 'x',
    });
    const wrongHmac = createHmac('sha256', 'another-secret').update(body).digest('hex');
    const rightHmac = createHmac('sha256', SECRET).update(body).digest('hex');
    const right = await post(fake.url, `${WORD}-HMAC-SHA256 ${apiKey}:${rightHmac}`, endpointsKey, body);
    expect(right.status).toBe(303);
    const attempts = [
      post(fake.url, `${WORD} ak_wrong:${SECRET}`, endpointsKey, body),
      post(fake.url, `${WORD} ${apiKey}:${SECRET}`, 'ek_wrong', body),
      post(fake.url, `${WORD}-HMAC-SHA256 ${apiKey}:${wrongHmac}`, endpointsKey, body),
      post(fake.url, `${WORD} ${apiKey}:not-the-secret`, endpointsKey, body),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(REFUSED);
    }
  });
}

it("the merchant's verifier agrees with the docs' SHA-1 example", () => {
  expect(merchantSignature('changeme', 'eyJuYW1lIjoiSm9lIiwiYWdlIjoyMH0=')).toBe(
    'Bcj3hb-h00HrEMIoJ5nPW5ZHlVQ=',
  );
});

describe('payhook serve --algorithm sha1 (built CLI, child process) with merchant code', () => {
  let stopServe = async () => {};
  beforeAll(() => assertBuilt());
  itAcceptsMerchantCode(
    async () => {
      const served = await serveCli(['--algorithm', 'sha1'], { PAYHOOK_SECRET: SECRET });
      stopServe = async () => void (await served.stop());
      return { ...served, settle: async () => {} };
    },
    () => stopServe(),
  );
});

describe("mockPaymentApi({ algorithm: 'sha1' }) with merchant code", () => {
  let api: ReturnType<typeof mockPaymentApi> | undefined;
  itAcceptsMerchantCode(
    async () => {
      api = mockPaymentApi({ baseUrl: 'https://api.payments.test', secret: SECRET, algorithm: 'sha1' });
      const { posId, apiKey, endpointsKey } = api.project;
      return {
        url: api.baseUrl,
        credentials: { posId, apiKey, endpointsKey },
        settle: () => api!.fake.idle(),
      };
    },
    async () => {
      api!.done({ expectRefusals: [401] });
      api!.restore();
    },
  );
});
