import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startApiService } from '../../test/api-service.js';
import { importWithBuiltins } from '../../test/builtins.js';
import { hmacSha256Hex } from './hmac.js';

const nodeHmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

/** The module as workerd without nodejs_compat loads it: no node: module, no global Buffer. */
async function withoutNode<T>(load: () => Promise<T>): Promise<T> {
  vi.stubGlobal('Buffer', undefined);
  return importWithBuiltins(undefined, load);
}
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('hmacSha256Hex', () => {
  it('answers synchronously with node:crypto', () => {
    expect(hmacSha256Hex('api-secret')('{"a":1}')).toBe(nodeHmac('api-secret', '{"a":1}'));
  });

  it('answers the same hex through Web Crypto where node:crypto is missing, lone surrogates included', async () => {
    const web = await withoutNode(() => import('./hmac.js'));
    const texts = fc.string({ unit: 'binary' });
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, unit: 'binary' }), texts, async (secret, text) => {
        const answer = web.hmacSha256Hex(secret)(text);
        expect(answer).toBeInstanceOf(Promise);
        expect(await answer).toBe(nodeHmac(secret, text));
      }),
      { numRuns: 60 },
    );
    // A key longer than SHA-256's block is hashed first, by both.
    const long = 'k'.repeat(100);
    const sign = web.hmacSha256Hex(long);
    expect([await sign(''), await sign('x')]).toEqual([nodeHmac(long, ''), nodeHmac(long, 'x')]);
  });
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

describe('@payhook/core/reconcile without node: builtins', () => {
  it('signs with Web Crypto as node:crypto does: a hosted and a direct create, and a re-send', async () => {
    // Node's own fetch needs its Buffer: only the node: modules are taken away here.
    const reconcile = await importWithBuiltins(undefined, () => import('../reconcile/index.js'));
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
