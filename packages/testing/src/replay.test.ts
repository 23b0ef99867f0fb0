import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { createCapture } from '@payhook/core/capture';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryIO } from './cli/io.js';
import { runCli } from './cli/run.js';
import { fakePurchase, fakeRefund, postWebhook, replayDeliveries } from './index.js';
import { readCaptureLine } from './inspect/deliveries.js';

const PRODUCTION_SECRET = 'production-secret-never-in-tests';
const TEST_SECRET = 'test-secret';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), `payhook-replay-${process.pid}-`));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Production: a capture file of a purchase whose handler failed, its redelivery handled, a refund, a forgery. */
async function captureIncident(path: string) {
  const capture = createCapture({ path });
  let failures = 1;
  const production = createWebhookHandler<IncomingMessage>({
    secret: PRODUCTION_SECRET,
    capture,
    logger: false,
    handle: () => {
      if (failures-- > 0) throw new Error('orders table locked');
    },
  });
  const app = createNodeListener(production);
  const purchase = fakePurchase({ customer_email: 'jo@example.com' }, { seed: 'incident' });
  const refund = fakeRefund({ amount: 10 }, { seed: 'incident' });
  await postWebhook(app, purchase, { secret: PRODUCTION_SECRET });
  await postWebhook(app, purchase, { secret: PRODUCTION_SECRET });
  await postWebhook(app, refund, { secret: PRODUCTION_SECRET, variant: 'json' });
  await postWebhook(app, purchase, { secret: PRODUCTION_SECRET, variant: 'wrongSecret' });
  await capture.flush();
  return { purchase, refund };
}

describe('replayDeliveries', () => {
  it('posts each captured delivery again, re-signed with the test secret, in order, and returns each answer', async () => {
    const file = join(dir, 'incident.jsonl');
    const { purchase, refund } = await captureIncident(file);
    const seen: Notification[] = [];
    const app = createNodeListener(
      createWebhookHandler({ secret: TEST_SECRET, logger: false, handle: (n) => void seen.push(n) }),
    );

    const replayed = await replayDeliveries(app, file, { secret: TEST_SECRET });

    // The forged delivery (line 4) has nothing verified to replay.
    expect(replayed.map((r) => [r.line, r.captured.status, r.captured.code ?? r.captured.outcome])).toEqual([
      [1, 500, 'handler.failed'],
      [2, 200, 'handled'],
      [3, 200, 'handled'],
    ]);
    expect(replayed.map((r) => [r.response.status, r.response.outcome])).toEqual([
      [200, 'handled'],
      [200, 'duplicate'],
      [200, 'handled'],
    ]);
    expect(replayed.map((r) => r.response.signed.variant)).toEqual(['exact', 'exact', 'json']);
    expect(seen.map((n) => [n.method, n.payment_id])).toEqual([
      ['purchase', purchase.payment_id],
      ['refund', refund.payment_id],
    ]);
    // What production masked stays masked: the app sees the placeholder, never the token or the address.
    expect(seen[0]).toMatchObject({ cc_token: '[masked]', cc_mask: '[masked]', customer_email: '[masked]' });
    expect(seen[0]).toMatchObject({ order_id: purchase.order_id, amount: purchase.amount });
  });

  it('reaches a Fetch handler and a custom path too', async () => {
    const file = join(dir, 'incident.jsonl');
    await captureIncident(file);
    const webhook = createWebhookHandler({ secret: TEST_SECRET, logger: false, handle: () => {} });
    const paths: string[] = [];
    const handler = (request: Request) => {
      paths.push(new URL(request.url).pathname);
      return webhook.fetch(request);
    };
    const replayed = await replayDeliveries(handler, file, { secret: TEST_SECRET, path: '/pay/hook' });
    expect(replayed.map((r) => r.response.outcome)).toEqual(['handled', 'duplicate', 'handled']);
    expect(paths).toEqual(['/pay/hook', '/pay/hook', '/pay/hook']);
  });

  it('takes the capture as text', async () => {
    const line = JSON.stringify({
      v: 1,
      at: '2026-11-20T10:00:00.000Z',
      status: 200,
      outcome: 'handled',
      notification: fakePurchase({}, { seed: 't' }),
    });
    const app = createNodeListener(createWebhookHandler({ secret: TEST_SECRET, handle: () => {} }));
    const [replayed] = await replayDeliveries(app, { text: `${line}\n` }, { secret: TEST_SECRET });
    replayed!.response.expectHandled();
  });

  it('names the file and the line that is not a captured delivery', async () => {
    const file = join(dir, 'broken.jsonl');
    await writeFile(file, `${JSON.stringify({ v: 1, status: 401, outcome: 'refused' })}\n{"data":"x"}\n`);
    const app = createNodeListener(createWebhookHandler({ secret: TEST_SECRET }));
    await expect(replayDeliveries(app, file, { secret: TEST_SECRET })).rejects.toThrow(
      `[@payhook/testing] ${file}, line 2: not a captured delivery (expected {"v":1,…} to {"v":3,…} from createCapture).`,
    );
    await writeFile(
      file,
      `${JSON.stringify({ v: 1, status: '200', outcome: 'handled', notification: {} })}\n`,
    );
    await expect(replayDeliveries(app, file, { secret: TEST_SECRET })).rejects.toThrow(
      `[@payhook/testing] ${file}, line 1: "status" is not an HTTP status (not a captured delivery from createCapture).`,
    );
    await writeFile(file, 'not json\n');
    await expect(replayDeliveries(app, file, { secret: TEST_SECRET })).rejects.toThrow(
      `[@payhook/testing] ${file}, line 1: not JSON (a capture has one object per line).`,
    );
  });

  it('skips a line torn by a full disk when given onTornLine, naming it by number, and replays the others', async () => {
    const file = join(dir, 'torn.jsonl');
    const whole = (seed: string) =>
      JSON.stringify({
        v: 1,
        at: '2026-11-20T10:00:00.000Z',
        status: 200,
        outcome: 'handled',
        notification: fakePurchase({}, { seed }),
      });
    // What a full disk left before capture wrote lines whole: half a line, the next line appended to it.
    const torn = `${whole('torn').slice(0, 90)}${whole('second')}`;
    await writeFile(file, `${whole('first')}\n${torn}\n${whole('third')}`);
    const app = createNodeListener(createWebhookHandler({ secret: TEST_SECRET, handle: () => {} }));
    const tornLines: number[] = [];
    const replayed = await replayDeliveries(app, file, {
      secret: TEST_SECRET,
      onTornLine: (line) => void tornLines.push(line),
    });
    expect(tornLines).toEqual([2]);
    expect(replayed.map((r) => [r.line, r.response.outcome])).toEqual([
      [1, 'handled'],
      [3, 'handled'],
    ]);
    await expect(replayDeliveries(app, file, { secret: TEST_SECRET })).rejects.toThrow(
      `[@payhook/testing] ${file}, line 2: not JSON (a capture has one object per line).`,
    );
  });

  it('inspects, replays and names the missing field of a delivery refused as notification.invalid after its signature matched', async () => {
    const file = join(dir, 'invalid.jsonl');
    const capture = createCapture({ path: file });
    const production = createNodeListener(
      createWebhookHandler<IncomingMessage>({ secret: PRODUCTION_SECRET, capture, logger: false }),
    );
    const { order_id: _missing, ...sent } = fakePurchase(
      { customer_email: 'jo@example.com' },
      { seed: 'invalid' },
    );
    const answer = await postWebhook(production, sent, { secret: PRODUCTION_SECRET });
    await postWebhook(production, sent, { secret: PRODUCTION_SECRET, variant: 'wrongSecret' });
    await capture.flush();
    expect(answer.status).toBe(400);
    const [invalid, forged] = (await readFile(file, 'utf8')).trim().split('\n');
    expect(readCaptureLine(invalid!, 1, 0)).toMatchObject({
      code: 'notification.invalid',
      event: 'purchase.success',
      notification: { payment_id: sent.payment_id, customer_email: '[masked]', cc_token: '[masked]' },
    });
    expect(readCaptureLine(forged!, 2, 1)).not.toHaveProperty('notification');

    const app = createNodeListener(createWebhookHandler({ secret: TEST_SECRET, logger: false }));
    const replayed = await replayDeliveries(app, file, { secret: TEST_SECRET });
    expect(replayed.map((r) => [r.line, r.captured.code, r.response.status])).toEqual([
      [1, 'notification.invalid', 400],
    ]);

    const { io, out, err } = memoryIO('', {});
    expect(await runCli(['drift', file], io)).toBe(0);
    expect([out, err]).toEqual([
      ['0 of 1 captured notifications carried what payhook does not type'],
      ['line 1: not a notification payhook parses, missing or malformed: order_id (skipped)'],
    ]);
  });
});
