import { describe, expect, it } from 'vitest';
import { asyncMemoryStore, formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import type { WebhookRequest } from '../http/request.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../index.js';
import { type CapturedDelivery, createCapture } from './capture.js';

/** One delivery of `request` to a handler with a capture: its answer and its line. */
async function captureOne(request: WebhookRequest, options: Partial<WebhookHandlerOptions> = {}) {
  const lines: CapturedDelivery[] = [];
  const capture = createCapture({ write: (line) => void lines.push(JSON.parse(line) as CapturedDelivery) });
  const webhook = createWebhookHandler({
    secret: SECRET,
    capture,
    logger: false,
    handle: () => {},
    ...options,
  });
  const result = await webhook(request, undefined);
  await capture.flush();
  return { result, line: lines[0]! };
}

const JSON_TYPE = 'application/json; charset=utf-8';

describe("capture of the answer's headers (format 3)", () => {
  it("keeps a handled delivery's answer headers: the JSON type payhook answered with", async () => {
    const { result, line } = await captureOne(post(formBody(purchase())));
    expect(result.status).toBe(200);
    expect(line.v).toBe(3);
    expect(line.answerHeaders).toEqual({ 'content-type': JSON_TYPE });
  });

  it('keeps Retry-After on a 503, so the inspector shows when the service was told to come back', async () => {
    const failing = {
      ...asyncMemoryStore('down'),
      claim: async () => {
        throw new Error('connection refused');
      },
    };
    const { result, line } = await captureOne(post(formBody(purchase())), { store: failing });
    expect(result.status).toBe(503);
    expect(line).toMatchObject({ v: 3, status: 503, code: 'store.unavailable' });
    expect(line.answerHeaders).toEqual({ 'content-type': JSON_TYPE, 'retry-after': '1' });
  });

  it('keeps Allow on a 405 and Connection on a 413: every header payhook sets', async () => {
    const wrongMethod = await captureOne({ ...post(formBody(purchase())), method: 'GET' });
    expect(wrongMethod.line.answerHeaders).toEqual({ 'content-type': JSON_TYPE, allow: 'POST' });
    const tooLarge = await captureOne(post(formBody(purchase({ pad: 'x'.repeat(4_000) }))), {
      maxBodyBytes: 1_024,
    });
    expect(tooLarge.result.status).toBe(413);
    expect(tooLarge.line.answerHeaders).toEqual({ 'content-type': JSON_TYPE, connection: 'close' });
  });

  it('never keeps a header payhook does not set, whatever put it on the result', async () => {
    const lines: CapturedDelivery[] = [];
    const capture = createCapture({ write: (line) => void lines.push(JSON.parse(line) as CapturedDelivery) });
    capture.record(
      { headers: {} },
      {
        status: 200,
        outcome: 'handled',
        body: '{}',
        headers: {
          'Content-Type': JSON_TYPE,
          'set-cookie': 'session=secret',
          authorization: 'Bearer t',
          'x-api-key': 'k',
        },
      },
    );
    await capture.flush();
    expect(lines[0]!.answerHeaders).toEqual({ 'content-type': JSON_TYPE });
  });
});
