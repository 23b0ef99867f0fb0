import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeServer, type FakeServerOptions, startFakeServer } from '../server.js';
import { TEST_CARDS } from './outcomes.js';

// One test per row of the operations table of public-facts.md ("four more integrations"): the exact bytes those
// integrations send, written to the fake's socket, and the status, body and code it answers.

const SECRET = 'public-requests-secret';
const WORD = 'ABCD';
const SUB_MERCHANT = '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: FakeServerOptions = {}): Promise<FakeServer> {
  const server = await startFakeServer({ secret: SECRET, seed: 43, ...options });
  servers.push(server);
  return server;
}

interface RawAnswer {
  status: number;
  body: string;
  json: unknown;
}

/** Writes `head` (CRLF lines, Host and Content-Length added as any client adds them) and `body` to the socket. */
function send(server: FakeServer, head: readonly string[], body = ''): Promise<RawAnswer> {
  const length = body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`];
  const bytes = [...head, `Host: 127.0.0.1:${server.port}`, ...length, 'Connection: close', '', body].join(
    '\r\n',
  );
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [top, ...rest] = text.split('\r\n\r\n');
      const chunked = /transfer-encoding: chunked/i.test(top!);
      const raw = rest.join('\r\n\r\n');
      const payload = chunked ? dechunk(raw) : raw;
      let json: unknown;
      try {
        json = JSON.parse(payload);
      } catch {
        json = undefined;
      }
      resolve({ status: Number(top!.split(' ')[1]), body: payload, json });
    });
  });
}

function dechunk(raw: string): string {
  let out = '';
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** The plugins' headers: `X-API-AUTH: <WORD> <API_KEY>:<API_SECRET>`, the endpoints key, a JSON type. */
function headers(server: FakeServer, type = 'application/json'): string[] {
  const { apiKey, endpointsKey } = server.fake.project;
  return [`X-API-AUTH: ${WORD} ${apiKey}:${SECRET}`, `X-API-KEY: ${endpointsKey}`, `Content-Type: ${type}`];
}

/** A direct payment made in the engine (the prerequisite of an operation), successful. */
function paid(server: FakeServer, order_id: string, method: 'auth' | 'purchase', amount: number): void {
  server.fake.createPayment({
    pos_id: server.fake.project.posId,
    mode: 'direct',
    method,
    amount,
    currency: 'XTS',
    description: 'Tea',
    order_id,
    customer_ip: '10.0.0.7',
    cc_number: TEST_CARDS.success,
    exp_month: 12,
    exp_year: 2031,
    card_cvv: '737',
  });
}

/** The fields of a secondary operation record (spec 2.2) the fake answers, `receipt_url` on a refund. */
const OPERATION_FIELDS = [
  'amount',
  'created_at',
  'currency',
  'fee',
  'fixed_fee',
  'method',
  'mode',
  'operation_id',
  'order_id',
  'payment_id',
  'percent_fee',
  'pos_id',
  'processed_at',
  'status',
  'status_code',
  'status_description',
  'transaction_id',
];

const error = (message: string, code: string) => ({ message, args: { code } });

describe('the public request shapes of capture, void, refund and status (public-facts, one test per row)', () => {
  it('refund: POST /api/v1/refund with order_amount, order_currency and refund_amount as floats', async () => {
    const server = await start();
    paid(server, 'order-refund', 'purchase', 100);
    const posId = server.fake.project.posId;
    const body = `{"pos_id":"${posId}","order_id":"order-refund","order_amount":100.0,"order_currency":"XTS","refund_amount":25.5}`;
    const answer = await send(server, ['POST /api/v1/refund HTTP/1.1', ...headers(server)], body);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json as object).sort()).toEqual([...OPERATION_FIELDS, 'receipt_url'].sort());
    expect(answer.json).toMatchObject({
      method: 'refund',
      mode: 'direct',
      order_id: 'order-refund',
      pos_id: posId,
      amount: 25.5,
      currency: 'XTS',
      status: 'success',
      status_code: '1004',
      status_description: 'Refund successful',
    });
    const over = body.replace('25.5', '80');
    const refused = await send(server, ['POST /api/v1/refund HTTP/1.1', ...headers(server)], over);
    expect([refused.status, refused.json]).toEqual([
      422,
      error('The operation amount must be positive and at most what is left.', 'O-422'),
    ]);
  });

  it('capture: POST /api/v1/capture with charge_amount, its JSON declared application/x-www-form-urlencoded', async () => {
    const server = await start();
    paid(server, 'order-capture', 'auth', 100);
    const posId = server.fake.project.posId;
    const body = `{"pos_id":"${posId}","order_id":"order-capture","order_amount":100,"order_currency":"XTS","charge_amount":60}`;
    const head = ['POST /api/v1/capture HTTP/1.1', ...headers(server, 'application/x-www-form-urlencoded')];
    const answer = await send(server, head, body);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json as object).sort()).toEqual(OPERATION_FIELDS);
    expect(answer.json).toMatchObject({
      method: 'capture',
      amount: 60,
      status: 'success',
      status_code: '1000',
    });
    const again = await send(server, head, body);
    expect([again.status, again.json]).toEqual([
      409,
      error('Only a successful, uncaptured, unvoided auth can be captured.', 'O-409'),
    ]);

    const strict = await start({ strict: true });
    paid(strict, 'order-capture', 'auth', 100);
    const strictBody = body.replace(posId, strict.fake.project.posId);
    const strictHead = [
      'POST /api/v1/capture HTTP/1.1',
      ...headers(strict, 'application/x-www-form-urlencoded'),
    ];
    const refused = await send(strict, strictHead, strictBody);
    expect([refused.status, refused.json]).toEqual([
      415,
      error('Content-Type must be application/json.', 'R-415'),
    ]);
  });

  it('void: POST /api/v1/void with pos_id, order_id and currency, comment, server_url sent as null', async () => {
    const server = await start();
    paid(server, 'order-void', 'auth', 40);
    const posId = server.fake.project.posId;
    const body = `{"pos_id":"${posId}","order_id":"order-void","currency":null,"comment":null,"server_url":null}`;
    const answer = await send(server, ['POST /api/v1/void HTTP/1.1', ...headers(server)], body);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json as object).sort()).toEqual(OPERATION_FIELDS);
    expect(answer.json).toMatchObject({ method: 'void', amount: 40, status: 'success' });
    const again = await send(server, ['POST /api/v1/void HTTP/1.1', ...headers(server)], body);
    expect([again.status, again.json]).toEqual([
      409,
      error('Only a successful payment with no capture or refund can be voided.', 'O-409'),
    ]);
  });

  it('split capture: POST /api/v1/split/capture with charge_amount, currency, comment, server_url and split', async () => {
    const server = await start();
    paid(server, 'order-split', 'auth', 100);
    const posId = server.fake.project.posId;
    const body = `{"pos_id":"${posId}","order_id":"order-split","charge_amount":60,"currency":"XTS","comment":"first parcel","server_url":null,"split":[{"amount":60,"sub_merchant_id":"${SUB_MERCHANT}"}]}`;
    const answer = await send(server, ['POST /api/v1/split/capture HTTP/1.1', ...headers(server)], body);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ method: 'capture', amount: 60, order_id: 'order-split' });
    const noSplit = body.replace(/,"split":.*\}$/, '}');
    const refused = await send(server, ['POST /api/v1/split/capture HTTP/1.1', ...headers(server)], noSplit);
    expect([refused.status, refused.json]).toEqual([
      400,
      {
        message: 'The request is invalid: see args.violations.',
        args: {
          code: 'V-400',
          violations: [
            {
              field: 'split',
              code: 'required',
              message: 'split must be a non-empty array of { amount, sub_merchant_id }.',
            },
          ],
        },
      },
    ]);
  });

  it("status: GET /api/v1/pos/<pos_id>/orders/<order_id> answers the order's records; orders/0 a clear not-found", async () => {
    const server = await start();
    paid(server, 'order-status', 'auth', 100);
    server.fake.capture(server.fake.paymentByOrder('order-status')!.record.payment_id, 30);
    const posId = server.fake.project.posId;
    const [auth, key] = headers(server);
    const answer = await send(server, [`GET /api/v1/pos/${posId}/orders/order-status HTTP/1.1`, auth!, key!]);
    expect(answer.status).toBe(200);
    expect((answer.json as Array<Record<string, unknown>>).map((r) => `${r.method} ${r.amount}`)).toEqual([
      'auth 100',
      'capture 30',
    ]);
    const probe = await send(server, [`GET /api/v1/pos/${posId}/orders/0 HTTP/1.1`, auth!, key!]);
    expect([probe.status, probe.json]).toEqual([404, error('No order "0" for this project.', 'N-404')]);
    const wrong = await send(server, [
      `GET /api/v1/pos/${posId}/orders/0 HTTP/1.1`,
      auth!,
      'X-API-KEY: wrong',
    ]);
    expect([wrong.status, wrong.json]).toEqual([401, error('Invalid pos_id field or credentials', 'S-404')]);
  });

  it("guests: customer_id and customer_email 'unregistered', as the vendor's plugins send a guest", async () => {
    const server = await start();
    const posId = server.fake.project.posId;
    const body = `{"pos_id":"${posId}","mode":"direct","method":"purchase","amount":12.5,"currency":"XTS","description":"Tea","order_id":"guest-1","customer_id":"unregistered","customer_email":"unregistered","customer_ip":"10.0.0.7","cc_number":"${TEST_CARDS.success}","exp_month":12,"exp_year":2031,"card_cvv":"737"}`;
    const answer = await send(server, ['POST /api/v1/payment HTTP/1.1', ...headers(server)], body);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      order_id: 'guest-1',
      status: 'success',
      customer_id: 'unregistered',
      customer_email: 'unregistered',
    });
  });

  it('true in a query: callback=1 (PHP) and an empty transactionId (a community SDK) re-send the webhook', async () => {
    const server = await start();
    paid(server, 'order-query', 'purchase', 10);
    const posId = server.fake.project.posId;
    const [auth, key] = headers(server);
    const php = await send(server, [
      `GET /api/v1/pos/${posId}/orders/order-query/purchase?callback=1 HTTP/1.1`,
      auth!,
      key!,
    ]);
    expect(php.status).toBe(200);
    expect(php.json).toMatchObject({ order_id: 'order-query', method: 'purchase', status: 'success' });
    const sdk = await send(server, [
      `GET /api/v1/pos/${posId}/orders/order-query/purchase?transactionId=&callback=true HTTP/1.1`,
      auth!,
      key!,
    ]);
    expect(sdk.status).toBe(200);
    expect(sdk.json).toMatchObject({ order_id: 'order-query', status: 'success' });

    const strict = await start({ strict: true });
    paid(strict, 'order-query', 'purchase', 10);
    const [strictAuth, strictKey] = headers(strict);
    const refused = await send(strict, [
      `GET /api/v1/pos/${strict.fake.project.posId}/orders/order-query/purchase?callback=1 HTTP/1.1`,
      strictAuth!,
      strictKey!,
    ]);
    expect([refused.status, refused.json]).toEqual([400, error('callback=true is required.', 'R-400')]);
  });

  it('expiry: exp_month and exp_year as numeric strings accepted, refused when strict', async () => {
    const body = (posId: string) =>
      `{"pos_id":"${posId}","mode":"direct","method":"purchase","amount":12.5,"currency":"XTS","description":"Tea","order_id":"exp-1","customer_ip":"10.0.0.7","cc_number":"${TEST_CARDS.success}","exp_month":"07","exp_year":"2030","card_cvv":"737"}`;
    const server = await start();
    const answer = await send(
      server,
      ['POST /api/v1/payment HTTP/1.1', ...headers(server)],
      body(server.fake.project.posId),
    );
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      order_id: 'exp-1',
      status: 'success',
      cc_token_expiration: '2030-07-31T23:59:59',
    });
    const strict = await start({ strict: true });
    const refused = await send(
      strict,
      ['POST /api/v1/payment HTTP/1.1', ...headers(strict)],
      body(strict.fake.project.posId),
    );
    expect(refused.status).toBe(400);
    expect(
      (refused.json as { args: { code: string; violations: Array<{ field: string; code: string }> } }).args,
    ).toMatchObject({
      code: 'V-400',
      violations: [
        { field: 'exp_month', code: 'type' },
        { field: 'exp_year', code: 'type' },
      ],
    });
  });

  it('header quirks: X-API-Auth repeated (the same value works, different values are named), ?key= beside X-API-KEY', async () => {
    const server = await start();
    paid(server, 'order-headers', 'purchase', 10);
    const { posId, apiKey, endpointsKey } = server.fake.project;
    const path = `/api/v1/pos/${posId}/orders/order-headers`;
    const auth = `X-API-Auth: ${WORD} ${apiKey}:${SECRET}`;
    const twice = await send(server, [`GET ${path} HTTP/1.1`, auth, auth, `X-API-KEY: ${endpointsKey}`]);
    expect(twice.status).toBe(200);
    const other = `X-API-Auth: ${WORD} ${apiKey}:another`;
    const differ = await send(server, [`GET ${path} HTTP/1.1`, auth, other, `X-API-KEY: ${endpointsKey}`]);
    expect([differ.status, differ.json]).toEqual([
      401,
      error('X-API-AUTH was sent 2 times with different values: send it once per request.', 'S-404'),
    ]);
    expect(differ.body).not.toContain(SECRET);
    const both = await send(server, [
      `GET ${path}?key=${endpointsKey} HTTP/1.1`,
      auth,
      `X-API-KEY: ${endpointsKey}`,
    ]);
    expect(both.status).toBe(200);
    const query = await send(server, [`GET ${path}?key=${endpointsKey} HTTP/1.1`, auth]);
    expect(query.status).toBe(200);
    const mismatch = await send(server, [
      `GET ${path}?key=wrong HTTP/1.1`,
      auth,
      `X-API-KEY: ${endpointsKey}`,
    ]);
    expect([mismatch.status, mismatch.json]).toEqual([
      401,
      error('X-API-KEY and the ?key= parameter differ: send one endpoints key.', 'S-404'),
    ]);
  });

  it('an unknown route answers 404 naming the routes the fake has', async () => {
    const server = await start();
    const [auth, key] = headers(server);
    const answer = await send(server, ['GET /api/v1/orders/o-1 HTTP/1.1', auth!, key!]);
    expect(answer.status).toBe(404);
    const { message, args } = answer.json as { message: string; args: { code: string } };
    expect(args.code).toBe('N-404');
    expect(message).toContain('no route GET /api/v1/orders/o-1. It answers POST /api/v1/payment,');
    for (const route of [
      'POST /api/v1/refund',
      'POST /api/v1/capture',
      'POST /api/v1/void',
      'POST /api/v1/split/capture',
    ]) {
      expect(message).toContain(route);
    }
    expect(message).toContain('GET /api/v1/pos/{pos_id}/orders/{order_id},');
  });
});
