import { Readable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { signedData } from '../../../test/support/signed-form.ts';
import { FORM_HEADERS, formBody, post, purchase, refund, SECRET, setup } from '../test/fixtures.js';
import { createWebhookHandler, type WebhookRequest } from './handler.js';
import { encodeBase64Url } from './runtime/bytes.js';
import type { DedupeStore } from './stores/contract.js';
import { sign } from './verify/signature.js';

describe('createWebhookHandler: answers', () => {
  it('answers 200 handled and calls the handler with the typed notification', async () => {
    const { handler, seen } = setup();
    const result = await handler(post(formBody(purchase())), undefined);
    expect(result).toMatchObject({
      status: 200,
      outcome: 'handled',
      body: '{"ok":true,"outcome":"handled"}',
    });
    expect(result.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ kind: 'primary', method: 'purchase', amount: 150.25, status: 'success' });
  });

  it('gives the handler raw as sent, the same object on the notification and the delivery', async () => {
    const sent = purchase({ status_code: 1000, extra_field: 'x' });
    const raws: unknown[] = [];
    const { handler } = setup({ handle: (n, _, delivery) => void raws.push(n.raw, delivery.raw) });
    await handler(post(formBody(sent)), undefined);
    expect(raws[0]).toEqual(sent);
    expect(raws[1]).toBe(raws[0]);
  });

  it('answers 200 duplicate for an exact redelivery, without calling the handler', async () => {
    const { handler, seen } = setup();
    const body = formBody(purchase());
    await handler(post(body), undefined);
    const again = await handler(post(body), undefined);
    expect(again).toMatchObject({
      status: 200,
      outcome: 'duplicate',
      body: '{"ok":true,"outcome":"duplicate"}',
    });
    expect(seen).toHaveLength(1);
  });

  it('treats a redelivery with a later processed_at or a new field as a duplicate', async () => {
    const { handler, seen } = setup();
    await handler(post(formBody(purchase())), undefined);
    const later = await handler(
      post(formBody(purchase({ processed_at: '2026-11-22T10:20:00', new_field: 1 }))),
      undefined,
    );
    expect(later.outcome).toBe('duplicate');
    expect(seen).toHaveLength(1);
  });

  it('handles pending then success, two partial refunds, and two recurring charges as new', async () => {
    const { handler, seen } = setup();
    const bodies = [
      purchase({ status: 'pending', status_code: '2122', user_action_required: true }),
      purchase(),
      refund({ operation_id: 'r-1', amount: 10 }),
      refund({ operation_id: 'r-2', amount: 10 }),
      purchase({ transaction_id: 't-1', recurring: { id: 'rec', status: 'active' } }),
      purchase({ transaction_id: 't-2', recurring: { id: 'rec', status: 'active' } }),
    ];
    for (const body of bodies) {
      expect((await handler(post(formBody(body)), undefined)).outcome).toBe('handled');
    }
    expect(seen).toHaveLength(6);
  });

  it.each([
    ['the data field is missing', `signature=${'A'.repeat(44)}`, 'payload.field_missing'],
    ['the signature field is missing', 'data=eyJhIjoxfQ', 'payload.field_missing'],
    ['a field is repeated', `${formBody(purchase())}&data=eyJhIjoxfQ`, 'payload.field_repeated'],
    ['a percent-escape is malformed', `data=%E0%A4%A&signature=${'A'.repeat(44)}`, 'payload.malformed'],
    ['data is not base64', signedData('%%%not-base64', SECRET), 'data.encoding_invalid'],
    ['data is not JSON', signedData(encodeBase64Url('{"payment_id":'), SECRET), 'data.json_invalid'],
    ['data is JSON but not an object', signedData(encodeBase64Url('[1]'), SECRET), 'data.not_object'],
  ])('answers 400 when %s', async (_, body, code) => {
    const { handler, seen } = setup();
    const result = await handler(post(body), undefined);
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body)).toMatchObject({ ok: false, error: { code } });
    expect(seen).toHaveLength(0);
  });

  it('answers 400 naming every missing required field', async () => {
    const { handler } = setup();
    const { payment_id: _, amount: __, ...partial } = purchase();
    const result = await handler(post(formBody(partial)), undefined);
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body).error).toMatchObject({
      code: 'notification.invalid',
      fields: ['payment_id', 'amount'],
    });
  });

  it('answers 401 when the data was changed after signing', async () => {
    const { handler, seen } = setup();
    const params = new URLSearchParams(formBody(purchase()));
    params.set('data', encodeBase64Url(JSON.stringify(purchase({ amount: 1 }))));
    const result = await handler(post(params.toString()), undefined);
    expect(result.status).toBe(401);
    expect(JSON.parse(result.body).error.code).toBe('signature.invalid');
    expect(seen).toHaveLength(0);
  });

  it('answers 401 for a signature made with another secret or of the wrong size', async () => {
    const { handler } = setup();
    expect((await handler(post(formBody(purchase(), 'other')), undefined)).status).toBe(401);
    const short = `data=${encodeBase64Url('{}')}&signature=abc`;
    expect(JSON.parse((await handler(post(short), undefined)).body).error.code).toBe('signature.invalid');
  });

  it('answers 403 to a sender outside allowedSenders, honouring X-Forwarded-For only when told', async () => {
    const { handler } = setup({ allowedSenders: ['35.187.74.148'] });
    const result = await handler(post(formBody(purchase())), undefined);
    expect(result.status).toBe(403);
    expect(JSON.parse(result.body).error.code).toBe('sender.forbidden');
    const forwarded = { ...FORM_HEADERS, 'x-forwarded-for': '35.187.74.148' };
    expect((await handler(post(formBody(purchase()), forwarded), undefined)).status).toBe(403);
    const proxied = setup({ allowedSenders: ['35.187.74.148'], trustProxy: 1 });
    const spoofed = { ...FORM_HEADERS, 'x-forwarded-for': '6.6.6.6, 35.187.74.148' };
    expect((await proxied.handler(post(formBody(purchase()), spoofed), undefined)).status).toBe(200);
    const direct = {
      method: 'POST',
      headers: FORM_HEADERS,
      body: formBody(purchase()),
      remoteAddress: '::ffff:35.187.74.148',
    };
    expect((await handler(direct, undefined)).status).toBe(200);
  });

  it('answers 405 with Allow: POST to other methods', async () => {
    const { handler } = setup();
    const result = await handler({ method: 'GET', headers: {} }, undefined);
    expect(result.status).toBe(405);
    expect(result.headers.allow).toBe('POST');
    expect(JSON.parse(result.body).error.code).toBe('request.method_not_allowed');
  });

  it('answers 413 past the limit: by Content-Length, by a raw body, and while reading a stream', async () => {
    const { handler } = setup({ maxBodyBytes: 64 });
    const body = formBody(purchase());
    const declared = await handler(
      post(body, { ...FORM_HEADERS, 'content-length': String(body.length) }),
      undefined,
    );
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    expect((await handler(post(Buffer.from(body)), undefined)).status).toBe(413);
    const streamed = await handler(
      { method: 'POST', headers: FORM_HEADERS, stream: Readable.from([Buffer.from(body)]) },
      undefined,
    );
    expect(JSON.parse(streamed.body).error.code).toBe('payload.too_large');
  });

  it('answers 408 when the body does not arrive in time', async () => {
    const { handler } = setup({ readTimeoutMs: 20 });
    const stalled = new Readable({ read() {} });
    stalled.push('data=');
    const result = await handler({ method: 'POST', headers: FORM_HEADERS, stream: stalled }, undefined);
    expect(result.status).toBe(408);
    expect(result.headers.connection).toBe('close');
    expect(JSON.parse(result.body).error.code).toBe('payload.timeout');
  });

  it.each([['text/plain'], ['multipart/form-data; boundary=x'], ['']])(
    'answers 415 to Content-Type %j',
    async (type) => {
      const { handler } = setup();
      const result = await handler(
        post(formBody(purchase()), type ? { 'content-type': type } : {}),
        undefined,
      );
      expect(result.status).toBe(415);
      expect(JSON.parse(result.body).error.code).toBe('media_type.unsupported');
    },
  );

  it('answers 500 when the handler fails, releases the claim, and handles the redelivery', async () => {
    let calls = 0;
    const handler = createWebhookHandler({
      secret: SECRET,
      logger: false,
      handle: () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
    });
    const body = formBody(purchase());
    const failed = await handler(post(body), undefined);
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.body).error.code).toBe('handler.failed');
    expect(failed.body).not.toContain('database down');
    expect((await handler(post(body), undefined)).outcome).toBe('handled');
    expect((await handler(post(body), undefined)).outcome).toBe('duplicate');
    expect(calls).toBe(2);
  });

  it('answers 500 naming the fix when a body parser consumed the stream and kept nothing', async () => {
    const { handler } = setup();
    const consumed = Readable.from([Buffer.from(formBody(purchase()))]);
    for await (const _ of consumed);
    const result = await handler({ method: 'POST', headers: FORM_HEADERS, stream: consumed }, undefined);
    expect(result.status).toBe(500);
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'body.consumed' });
    expect(JSON.parse(result.body).error.message).toContain('mount the webhook before body parsers');
  });

  it.each([
    ['rejects', () => Promise.reject(new Error('ECONNREFUSED'))],
    [
      'throws',
      () => {
        throw new Error('ECONNREFUSED');
      },
    ],
  ])('answers 503 when the store %s, and runs the handler without it when failOpen', async (_, claim) => {
    const broken: DedupeStore = {
      name: 'broken-redis',
      claim,
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    const closed = setup({ store: broken });
    const result = await closed.handler(post(formBody(purchase())), undefined);
    expect(result.status).toBe(503);
    expect(result.headers['retry-after']).toBe('1');
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'store.unavailable' });
    expect(JSON.parse(result.body).error.message).toContain('broken-redis');
    expect(closed.seen).toHaveLength(0);
    const open = setup({ store: broken, failOpen: true });
    expect((await open.handler(post(formBody(purchase())), undefined)).outcome).toBe('handled');
    expect(open.seen).toHaveLength(1);
  });

  it('answers 409 when another copy stays in flight past inFlightWaitMs', async () => {
    let finish: (() => void) | undefined;
    const handler = createWebhookHandler({
      secret: SECRET,
      logger: false,
      inFlightWaitMs: 0,
      handle: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    const body = formBody(purchase());
    const first = handler(post(body), undefined);
    await vi.waitFor(() => expect(finish).toBeTypeOf('function'));
    const second = await handler(post(body), undefined);
    expect(second.status).toBe(409);
    expect(JSON.parse(second.body).error.code).toBe('notification.in_flight');
    finish!();
    expect((await first).outcome).toBe('handled');
  });

  it('never puts the secret, the card token or the payload in an answer', async () => {
    const { handler } = setup({ handle: () => Promise.reject(new Error(`boom ${SECRET}`)) });
    const body = formBody(purchase());
    const data = new URLSearchParams(body).get('data')!;
    const answers = [
      await handler(post(body), undefined),
      await handler(post(formBody(purchase(), 'wrong')), undefined),
      await handler(post(body, { 'content-type': 'text/plain' }), undefined),
    ];
    for (const answer of answers) {
      expect(answer.body).not.toContain(SECRET);
      expect(answer.body).not.toContain('tok_9c8b7a6f5e4d3c2b1a');
      expect(answer.body).not.toContain(data);
    }
  });
});

/**
 * Sends `copies` copies of one notification to a handler whose application handler waits on a gate, opens the
 * gate once every copy has arrived, and answers the results and the number of handler calls.
 */
async function concurrentCopies(copies: number, afterGate: (calls: number) => void = () => undefined) {
  let calls = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const handler = createWebhookHandler({
    secret: SECRET,
    logger: false,
    handle: async () => {
      calls++;
      await gate;
      afterGate(calls);
    },
  });
  const body = formBody(purchase());
  const answers = Promise.all(Array.from({ length: copies }, () => handler(post(body), undefined)));
  await new Promise((resolve) => setImmediate(resolve)); // every copy has arrived
  open();
  return { results: await answers, calls };
}

describe('createWebhookHandler: concurrency', () => {
  it('runs the handler once for 32 concurrent copies of one notification', async () => {
    const { results, calls } = await concurrentCopies(32);
    expect(calls).toBe(1);
    expect(results.filter((r) => r.outcome === 'handled')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(31);
    expect(results.every((r) => r.status === 200)).toBe(true);
  });

  it('hands the notification to a waiting copy when the first copy fails', async () => {
    const { results, calls } = await concurrentCopies(8, (call) => {
      if (call === 1) throw new Error('first attempt fails');
    });
    expect(results.filter((r) => r.status === 500)).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'handled')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(6);
    expect(calls).toBe(2);
  });
});

describe('createWebhookHandler: bodies', () => {
  it('reads a Buffer, a string, a parsed form object, a JSON envelope, a Node stream and a web stream', async () => {
    const body = formBody(purchase());
    const { data, signature } = Object.fromEntries(new URLSearchParams(body));
    const json = { 'content-type': 'application/json' };
    const requests: WebhookRequest[] = [
      post(Buffer.from(body)),
      post(body),
      post({ data, signature }),
      post(JSON.stringify({ data, signature }), json),
      post({ data, signature }, json),
      { method: 'POST', headers: FORM_HEADERS, stream: Readable.from([body.slice(0, 10), body.slice(10)]) },
      { method: 'POST', headers: FORM_HEADERS, body: Readable.from([Buffer.from(body)]) },
      { method: 'POST', headers: FORM_HEADERS, stream: new Response(body).body! },
      { method: 'POST', headers: FORM_HEADERS, body: {}, stream: Readable.from([Buffer.from(body)]) },
    ];
    for (const request of requests) {
      const { handler, seen } = setup();
      expect((await handler(request, undefined)).outcome).toBe('handled');
      expect(seen[0]?.payment_id).toBe('8f3f5a0e-1d2c-4b5a-9e8f-7a6b5c4d3e2f');
    }
  });

  it('refuses a repeated field that a parser turned into an array', async () => {
    const { handler } = setup();
    const result = await handler(post({ data: ['a', 'b'], signature: 'x' }), undefined);
    expect(JSON.parse(result.body).error.code).toBe('payload.field_repeated');
  });

  it('verifies standard-base64 data whose + was turned into a space by form decoding', async () => {
    const json = JSON.stringify(purchase({ description: '\u00fb\u00ef>>>?' }));
    const data = Buffer.from(json).toString('base64');
    expect(data).toContain('+');
    const unescaped = `data=${data}&signature=${encodeURIComponent(sign(data, SECRET))}`;
    const { handler } = setup();
    expect((await handler(post(unescaped), undefined)).outcome).toBe('handled');
  });

  it('serves Fetch API runtimes through .fetch', async () => {
    const { handler, seen } = setup();
    const response = await handler.fetch(
      new Request('http://localhost/webhooks', {
        method: 'POST',
        headers: FORM_HEADERS,
        body: formBody(purchase()),
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, outcome: 'handled' });
    expect(seen).toHaveLength(1);
    const refused = await handler.fetch(new Request('http://localhost/webhooks', { method: 'PUT' }));
    expect(refused.status).toBe(405);
  });
});
