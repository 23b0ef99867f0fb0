import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { parseNotification } from '../notification/parse.js';
import { notificationKey } from '../protocol/key.js';
import { type CapturedDelivery, type CaptureOptions, createCapture } from './capture.js';

const HANDLED = '{"ok":true,"outcome":"handled"}';

function collect(): { lines: CapturedDelivery[]; write: (line: string) => void } {
  const lines: CapturedDelivery[] = [];
  return { lines, write: (line) => void lines.push(JSON.parse(line) as CapturedDelivery) };
}

/** A handler whose capture keeps each line's raw text, as a file would hold it. */
function capturingWebhook() {
  const texts: string[] = [];
  const capture = createCapture({ write: (line) => void texts.push(line) });
  return { texts, capture, webhook: createWebhookHandler({ secret: SECRET, capture, handle: () => {} }) };
}

describe('createCapture: what a line holds', () => {
  it('records the notification with card and customer fields masked, the media type and the answer', async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const sent = purchase({
      customer_email: 'jo@example.com',
      customer_phone: '+380501112233',
      payload: 'p-1',
    });
    const result = await webhook(post(formBody(sent)), undefined);
    await capture.flush();

    expect(result.body).toBe(HANDLED);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      v: 3,
      status: 200,
      outcome: 'handled',
      key: notificationKey(parseNotification(sent)),
      durationMs: expect.any(Number),
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(line!.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(line!.notification).toEqual({
      ...sent,
      cc_mask: '[masked]',
      cc_token: '[masked]',
      customer_email: '[masked]',
      customer_phone: '[masked]',
    });
  });

  it('never writes the signature, the data envelope or the secret', async () => {
    const { texts, capture, webhook } = capturingWebhook();
    const body = formBody(purchase());
    await webhook(post(body), undefined);
    await capture.flush();
    const signature = decodeURIComponent(new URLSearchParams(body).get('signature')!);
    expect(texts).toHaveLength(1);
    expect(texts[0]).not.toContain(signature);
    expect(texts[0]).not.toContain(SECRET);
    expect(texts[0]).not.toContain('tok_9c8b7a6f5e4d3c2b1a');
    expect(texts[0]).not.toContain('"signature"');
  });

  it('masks by default the card number, expiry and CVV a payment record may echo from a direct request', async () => {
    const { texts, capture, webhook } = capturingWebhook();
    const card = {
      cc_number: '4111111111111111',
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '123',
      cc_cvv: '321',
    };
    await webhook(post(formBody(purchase(card))), undefined);
    await capture.flush();
    const line = JSON.parse(texts[0]!) as CapturedDelivery;
    expect(line.notification).toMatchObject({
      cc_number: '[masked]',
      exp_month: '[masked]',
      exp_year: '[masked]',
      card_cvv: '[masked]',
      cc_cvv: '[masked]',
    });
    expect(texts[0]).not.toContain('4111111111111111');
  });

  it('masks by default the receipt and 3DS links, which open the receipt or the payment step to whoever holds them', async () => {
    const { texts, capture, webhook } = capturingWebhook();
    const links = {
      receipt_url: 'https://pay.example/public/receipt/rcpt_5f4e3d2c1b0a',
      user_action_required: true,
      user_action_url: 'https://pay.example/public/3ds/acs_0a1b2c3d4e5f',
      result_url: 'https://shop.example/thanks',
    };
    await webhook(post(formBody(purchase(links))), undefined);
    await capture.flush();
    const line = JSON.parse(texts[0]!) as CapturedDelivery;
    expect(line.notification).toMatchObject({
      receipt_url: '[masked]',
      user_action_required: true,
      user_action_url: '[masked]',
      // The merchant's own redirect target is not a bearer link: kept.
      result_url: 'https://shop.example/thanks',
    });
    expect(texts[0]).not.toContain('rcpt_5f4e3d2c1b0a');
    expect(texts[0]).not.toContain('acs_0a1b2c3d4e5f');
  });

  it('masks the fields given in mask instead of the defaults, at any depth, and card data always', async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write, mask: ['payload', 'description'] });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const sent = purchase({
      payload: 'secret-order-data',
      limit_info: { description: 'limit reached' },
      receipt_url: 'https://pay.example/public/receipt/rcpt_1',
    });
    await webhook(post(formBody(sent)), undefined);
    await capture.flush();
    expect(lines[0]!.notification).toMatchObject({
      payload: '[masked]',
      limit_info: { description: '[masked]' },
      receipt_url: 'https://pay.example/public/receipt/rcpt_1',
      cc_token: '[masked]',
    });
  });

  it('records a handler failure with its notification and code, so the incident can be replayed', async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write });
    const webhook = createWebhookHandler({
      secret: SECRET,
      capture,
      logger: false,
      handle: () => {
        throw new Error('order table locked');
      },
    });
    const result = await webhook(post(formBody(purchase())), undefined);
    await capture.flush();
    expect(result.status).toBe(500);
    expect(lines).toEqual([
      expect.objectContaining({
        status: 500,
        outcome: 'refused',
        code: 'handler.failed',
        notification: expect.objectContaining({ order_id: 'order-1001', cc_token: '[masked]' }),
      }),
    ]);
  });

  it('records a forged delivery without its notification: nothing unverified is kept', async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const result = await webhook(post(formBody(purchase(), 'another-secret')), undefined);
    await capture.flush();
    expect(result.status).toBe(401);
    expect(lines).toEqual([
      {
        v: 3,
        at: expect.any(String),
        status: 401,
        outcome: 'refused',
        code: 'signature.invalid',
        durationMs: expect.any(Number),
        contentType: 'application/x-www-form-urlencoded',
        answerHeaders: { 'content-type': 'application/json; charset=utf-8' },
      },
    ]);
  });

  it("records a refused signature's diagnosis, never the signature or the data", async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {}, logger: false });
    const body = formBody(purchase(), SECRET).replace(
      /signature=[^&]*/,
      'signature=AAAAAAAAAAAAAAAAAAAAAAAAAAA%3D',
    );
    await webhook(post(body), undefined);
    await capture.flush();
    expect(lines).toEqual([
      expect.objectContaining({ v: 3, code: 'signature.invalid', hint: 'sha1_length' }),
    ]);
    expect(lines[0]).not.toHaveProperty('notification');
  });

  it('keeps the media type alone, not what an unsigned sender put in the header after it', async () => {
    const { texts, capture, webhook } = capturingWebhook();
    const header = `Application/X-WWW-Form-Urlencoded; charset=utf-8; x=${'A'.repeat(8_000)}`;
    await webhook(post(formBody(purchase(), 'another-secret'), { 'content-type': header }), undefined);
    await capture.flush();
    expect((JSON.parse(texts[0]!) as CapturedDelivery).contentType).toBe('application/x-www-form-urlencoded');
    // The line with its answer headers (about 70 characters), nothing of the 8,000 the sender wrote.
    expect(texts[0]!.length).toBeLessThan(300);
  });

  it('records deliveries answered through fetch() too', async () => {
    const { lines, write } = collect();
    const capture = createCapture({ write });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const response = await webhook.fetch(
      new Request('http://127.0.0.1/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: formBody(purchase()),
      }),
    );
    await capture.flush();
    expect(response.status).toBe(200);
    expect(lines.map((line) => line.outcome)).toEqual(['handled']);
  });
});

describe('createCapture: a failing or slow writer never changes the answer', () => {
  it('answers 200 handled when the writer throws, counts the failure and warns once with the error code, never its message', async () => {
    const warn = vi.fn();
    const capture = createCapture({
      write: (line) => {
        throw Object.assign(new Error(`cannot write ${line}`), { code: 'ENOSPC' });
      },
      logger: { warn },
    });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const first = await webhook(post(formBody(purchase({ order_id: 'o-1' }))), undefined);
    const second = await webhook(post(formBody(purchase({ order_id: 'o-2', payment_id: 'p-2' }))), undefined);
    await capture.flush();
    expect([first.status, first.body, second.status, second.body]).toEqual([200, HANDLED, 200, HANDLED]);
    expect(capture.failed).toBe(2);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      '[@payhook/core] a delivery could not be captured (ENOSPC); answers are not affected.',
    );
  });

  it('answers 200 handled when the writer rejects', async () => {
    const capture = createCapture({ write: () => Promise.reject(new Error('EACCES')), logger: false });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const result = await webhook(post(formBody(purchase())), undefined);
    await capture.flush();
    expect(result.body).toBe(HANDLED);
    expect(capture.failed).toBe(1);
  });

  it('answers 200 handled when a capture the application made itself throws from record', async () => {
    const capture = {
      record: () => {
        throw new Error('sink down');
      },
      flush: async () => {},
      dropped: 0,
      failed: 0,
    };
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const result = await webhook(post(formBody(purchase())), undefined);
    expect([result.status, result.body]).toEqual([200, HANDLED]);
  });

  it('answers before a writer that never finishes, and drops lines beyond maxQueue instead of waiting', async () => {
    const started: string[] = [];
    let writing: () => void = () => {};
    const firstWrite = new Promise<void>((resolve) => {
      writing = resolve;
    });
    const capture = createCapture({
      write: (line) => {
        started.push(line);
        writing();
        return new Promise(() => {});
      },
      maxQueue: 2,
    });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const deliver = async (n: number) =>
      (await webhook(post(formBody(purchase({ payment_id: `p-${n}` }))), undefined)).outcome;
    const outcomes = [await deliver(0)];
    await firstWrite;
    for (let n = 1; n < 5; n++) outcomes.push(await deliver(n));
    expect(outcomes).toEqual(['handled', 'handled', 'handled', 'handled', 'handled']);
    // The writer holds the first line forever; two more wait in the queue; the last two were dropped.
    expect(started).toHaveLength(1);
    expect(capture.dropped).toBe(2);
  });

  it('flush(timeoutMs) gives up on a writer that never finishes, so a shutdown still ends', async () => {
    vi.useFakeTimers();
    try {
      const capture = createCapture({ write: () => new Promise(() => {}) });
      const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
      await webhook(post(formBody(purchase())), undefined);
      let flushed = false;
      void capture.flush(5_000).then(() => {
        flushed = true;
      });
      await vi.advanceTimersByTimeAsync(4_999);
      expect(flushed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(flushed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'path',
      {},
      '[@payhook/core] capture.path must be a file name (of a JSON-lines file) when capture.write is not set, not undefined.',
    ],
    ['write', { write: 'stdout' }, '[@payhook/core] capture.write must be a function, not "stdout".'],
    [
      'maxBytes',
      { path: 'x.jsonl', maxBytes: 0 },
      '[@payhook/core] capture.maxBytes must be a positive number, not 0.',
    ],
    [
      'maxQueue',
      { write: () => {}, maxQueue: 1.5 },
      '[@payhook/core] capture.maxQueue must be a positive integer, not 1.5.',
    ],
    [
      'mask',
      { write: () => {}, mask: 'cc_token' },
      '[@payhook/core] capture.mask must be an array of strings, not "cc_token".',
    ],
    [
      'logger',
      { write: () => {}, logger: true },
      '[@payhook/core] capture.logger must be false or an object with warn, such as console, not true.',
    ],
  ])('refuses a wrong %s when built, with a TypeError naming it', (_name, options, message) => {
    expect(() => createCapture(options as CaptureOptions)).toThrow(new TypeError(message));
  });

  it.each<[string, CaptureOptions]>([
    ['a path', { path: 'x.jsonl' }],
    ['a writer and every option', { write: () => {}, mask: [], maxBytes: 1, maxQueue: 1, logger: false }],
  ])('builds with %s', (_name, options) => {
    expect(createCapture(options)).toMatchObject({ dropped: 0, failed: 0 });
  });

  it('refuses, when the handler is built, a capture createCapture did not make', () => {
    expect(() => createWebhookHandler({ secret: SECRET, capture: { path: 'x' } as never })).toThrow(
      '[@payhook/core] capture must be made by createCapture({ path | write, … }), not an object.',
    );
  });
});

describe('createCapture: a file, rotated at maxBytes', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), `payhook-capture-${process.pid}-`));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends one JSON line per delivery', async () => {
    const path = join(dir, 'deliveries.jsonl');
    const capture = createCapture({ path });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    await webhook(post(formBody(purchase({ payment_id: 'p-1' }))), undefined);
    await webhook(post(formBody(purchase({ payment_id: 'p-1' }))), undefined);
    await capture.flush();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as CapturedDelivery).outcome)).toEqual([
      'handled',
      'duplicate',
    ]);
  });

  it('moves the file to <path>.1 before a line would pass maxBytes, so the disk holds at most about twice it', async () => {
    const path = join(dir, 'deliveries.jsonl');
    const capture = createCapture({ path, maxBytes: 1500 });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    for (let n = 0; n < 5; n++) {
      await webhook(post(formBody(purchase({ payment_id: `p-${n}` }))), undefined);
    }
    await capture.flush();
    const current = await readFile(path, 'utf8');
    const rotated = await readFile(`${path}.1`, 'utf8');
    expect(Buffer.byteLength(current)).toBeLessThanOrEqual(1500);
    expect(Buffer.byteLength(rotated)).toBeLessThanOrEqual(1500);
    const ids = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as CapturedDelivery).notification!.payment_id);
    // Lines are about 600 bytes: two per file; the oldest file was replaced by the next rotation.
    expect(ids(rotated)).toEqual(['p-2', 'p-3']);
    expect(ids(current)).toEqual(['p-4']);
  });

  it('keeps the bound when several processes append to one path (cluster workers): each measures the file', async () => {
    const path = join(dir, 'deliveries.jsonl');
    const workers = [createCapture({ path, maxBytes: 1500 }), createCapture({ path, maxBytes: 1500 })];
    const webhooks = workers.map((capture) =>
      createWebhookHandler({ secret: SECRET, capture, handle: () => {} }),
    );
    for (let n = 0; n < 8; n++) {
      await webhooks[n % 2]!(post(formBody(purchase({ payment_id: `p-${n}` }))), undefined);
      await workers[n % 2]!.flush();
    }
    expect(Buffer.byteLength(await readFile(path, 'utf8'))).toBeLessThanOrEqual(1500);
    expect(Buffer.byteLength(await readFile(`${path}.1`, 'utf8'))).toBeLessThanOrEqual(1500);
  });

  it('keeps capturing after the file was deleted (the incident is over, as docs/security.md advises)', async () => {
    const path = join(dir, 'deliveries.jsonl');
    const capture = createCapture({ path, maxBytes: 1000, logger: false });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    await webhook(post(formBody(purchase({ payment_id: 'p-0' }))), undefined);
    await capture.flush();
    await rm(path);
    for (let n = 1; n < 3; n++) {
      await webhook(post(formBody(purchase({ payment_id: `p-${n}` }))), undefined);
      await capture.flush();
    }
    expect(capture.failed).toBe(0);
    const ids = (await readFile(path, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as CapturedDelivery).notification!.payment_id);
    expect(ids).toEqual(['p-2']);
  });

  it('answers 200 handled when the file cannot be written', async () => {
    const capture = createCapture({ path: join(dir, 'missing-dir', 'deliveries.jsonl'), logger: false });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const result = await webhook(post(formBody(purchase())), undefined);
    await capture.flush();
    expect(result.body).toBe(HANDLED);
    expect(capture.failed).toBe(1);
  });
});
