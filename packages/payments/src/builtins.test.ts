import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importWithBuiltins, staticNodeImports } from '../../core/test/builtins.js';
import { startApiService } from '../test/api-service.js';

// @payhook/payments as workerd without nodejs_compat (and Node.js before 20.16) loads it: no `node:` module at
// all, and no global Buffer while it loads and runs.
async function withoutNode<T>(load: () => Promise<T>): Promise<T> {
  vi.stubGlobal('Buffer', undefined);
  return importWithBuiltins(undefined, load);
}
afterEach(() => {
  vi.unstubAllGlobals();
});

const nodeHmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

describe('@payhook/payments without node: builtins', () => {
  it('loads the validation and checks an IP address', async () => {
    const validation = await withoutNode(() => import('./index.js'));
    const request = {
      pos_id: 'c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a21',
      mode: 'hosted',
      method: 'purchase',
      amount: 100.5,
      currency: 'UAH',
      description: 'Order 1',
      order_id: 'o-1',
    };
    expect(validation.validatePaymentRequest({ ...request, customer_ip: '2001:db8::1' }).valid).toBe(true);
    expect(validation.validatePaymentRequest({ ...request, customer_ip: '1.2.3.256' }).violations).toEqual([
      expect.objectContaining({ field: 'customer_ip', code: 'format.ip' }),
    ]);
  });
});

it('imports no node: module on its main entry, but for types', () => {
  expect(staticNodeImports(dirname(fileURLToPath(import.meta.url)), 'index.ts')).toEqual([]);
});

/** A service answering a hosted create with a 303, a direct one with its record, a re-send with a record. */
function service(request: IncomingMessage, response: ServerResponse): void {
  let body = '';
  request.on('data', (chunk: Buffer) => {
    body += chunk.toString();
  });
  request.on('end', () => {
    const signature = String(request.headers['x-api-auth']).split(':')[1];
    if (signature !== nodeHmac('api-secret', body)) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Invalid credentials', args: { code: 'S-404' } }));
      return;
    }
    const sent = body === '' ? {} : (JSON.parse(body) as { mode?: string; order_id?: string });
    if (sent.mode === 'hosted') {
      response.writeHead(303, { location: '/api/v1/checkout/ch-1/form' });
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ payment_id: 'p-1', order_id: sent.order_id ?? 'o-1', status: 'success' }));
  });
}

describe('the API client without node: builtins', () => {
  it('signs with Web Crypto as node:crypto does: a hosted and a direct create, and a re-send', async () => {
    // Node's own fetch needs its Buffer: only the node: modules are taken away here.
    const reconcile = await importWithBuiltins(undefined, () => import('./index.js'));
    const { url, seen } = await startApiService(service);
    const client = reconcile.createApiClient({
      baseUrl: url,
      posId: '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a',
      apiKey: 'ak',
      endpointsKey: 'ek',
      apiSecret: 'api-secret',
    });
    const hosted = { mode: 'hosted', method: 'purchase', amount: 1, order_id: 'o-1' } as const;
    const card = { cc_number: '4242424242424242', exp_month: 12, exp_year: 2031, card_cvv: '737' };
    expect(await client.createPayment(hosted)).toEqual({
      kind: 'hosted',
      checkoutUrl: `${url}/api/v1/checkout/ch-1/form`,
      checkoutId: 'ch-1',
    });
    const direct = await client.createPayment({ ...hosted, mode: 'direct', order_id: 'o-2', ...card });
    expect(direct).toMatchObject({ kind: 'direct', record: { order_id: 'o-2', status: 'success' } });
    expect(await client.resend({ orderId: 'o-2' })).toMatchObject({
      status: 200,
      record: { payment_id: 'p-1' },
    });
    expect(seen.map((request) => request.method)).toEqual(['POST', 'POST', 'GET']);
  });
});
