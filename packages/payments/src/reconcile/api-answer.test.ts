import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { replyWith, startApiService } from '../../test/api-service.js';
import { createApiClient } from './api-client.js';
import type { ApiError } from './api-errors.js';

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const SECRETS = { apiKey: 'ak', endpointsKey: 'ek', apiSecret: 'secret' };
const MiB = 1024 * 1024;

/**
 * A service answering 200 with `total` bytes of a JSON string, written 64 KiB at a time as the client reads
 * (no Content-Length); `sent()` resolves with how many bytes it had written when the connection closed.
 */
function streaming(total: number) {
  let written = 0;
  let closed: (bytes: number) => void = () => {};
  const sent = new Promise<number>((resolve) => {
    closed = resolve;
  });
  const answer = (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.on('close', () => closed(written));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    response.write('"');
    const pump = () => {
      while (written < total) {
        written += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      response.end('"');
    };
    pump();
  };
  return { answer, sent };
}

describe('createApiClient().resend answer size', () => {
  it('abandons a 200 MB answer past maxAnswerBytes (1 MiB) with api.answer_too_large, reading a few MB at most', async () => {
    const big = streaming(200 * MiB);
    const { url } = await startApiService(big.answer);
    const client = createApiClient({ baseUrl: url, posId: POS, ...SECRETS });
    const error = await client.resend({ orderId: 'o-1' }).then(
      () => undefined,
      (e: ApiError) => e,
    );
    expect([error?.code, error?.status, error?.message]).toEqual([
      'api.answer_too_large',
      200,
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/o-1/purchase?callback=true answered 200 with a body over maxAnswerBytes (1048576 bytes): left unread; raise maxAnswerBytes if the service's records are that large.`,
    ]);
    // The client cancelled the stream: the service could write only what the socket buffers held.
    expect(await big.sent).toBeLessThan(32 * MiB);
  });

  it('refuses at once an answer whose Content-Length is past the bound', async () => {
    const { url } = await startApiService((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(200 * MiB) });
      response.write('{');
    });
    const client = createApiClient({ baseUrl: url, posId: POS, ...SECRETS });
    await expect(client.resend({ orderId: 'o-1' })).rejects.toMatchObject({ code: 'api.answer_too_large' });
  });

  it('reads an answer of exactly maxAnswerBytes, multi-byte characters split across chunks included', async () => {
    const record = { order_id: 'é'.repeat(40_000), status: 'success' };
    const body = JSON.stringify(record);
    const bytes = Buffer.byteLength(body);
    const { url } = await startApiService(replyWith(200, body));
    const exact = createApiClient({ baseUrl: url, posId: POS, ...SECRETS, maxAnswerBytes: bytes });
    expect(await exact.resend({ orderId: 'o-1' })).toEqual({ status: 200, record });
    const under = createApiClient({ baseUrl: url, posId: POS, ...SECRETS, maxAnswerBytes: bytes - 1 });
    await expect(under.resend({ orderId: 'o-1' })).rejects.toMatchObject({
      code: 'api.answer_too_large',
      status: 200,
    });
  });

  it('still names the status of an error answer past the bound, without its body', async () => {
    const { url } = await startApiService(
      replyWith(503, { message: 'x'.repeat(2000), args: { code: 'E-1' } }),
    );
    const client = createApiClient({ baseUrl: url, posId: POS, ...SECRETS, maxAnswerBytes: 100 });
    await expect(client.resend({ orderId: 'o-1' })).rejects.toMatchObject({
      code: 'api.server',
      status: 503,
      serviceCode: undefined,
    });
  });

  it.each([[0], [-1], [1.5], [Number.NaN]])('refuses maxAnswerBytes %s', (maxAnswerBytes) => {
    expect(() =>
      createApiClient({ baseUrl: 'https://pay.test', posId: POS, ...SECRETS, maxAnswerBytes }),
    ).toThrow(`[@payhook/payments] maxAnswerBytes must be a positive integer, not ${maxAnswerBytes}.`);
  });
});
