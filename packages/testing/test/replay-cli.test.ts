import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakePurchase, fakeRefund } from '../src/index.js';
import { assertBuilt, runCli } from './run-cli.js';

const secret = 'replay-test-secret';
const purchase = fakePurchase({}, { seed: 'replay-cli' });
const refund = fakeRefund({}, { seed: 'replay-cli' });
const seen: Notification[] = [];
let server: Server;
let url: string;
let dir: string;
let file: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), `payhook-replay-cli-${process.pid}-`));
  file = join(dir, 'capture.jsonl');
  const masked = { ...purchase, cc_token: '[masked]', cc_mask: '[masked]' };
  const lines = [
    {
      v: 1,
      at: '2026-11-20T10:00:00.000Z',
      status: 500,
      outcome: 'refused',
      code: 'handler.failed',
      contentType: 'application/x-www-form-urlencoded',
      notification: masked,
    },
    { v: 1, at: '2026-11-20T10:00:01.000Z', status: 401, outcome: 'refused', code: 'signature.invalid' },
    {
      v: 1,
      at: '2026-11-20T10:01:00.000Z',
      status: 200,
      outcome: 'handled',
      contentType: 'application/json',
      notification: refund,
    },
  ];
  await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  const webhook = createWebhookHandler<IncomingMessage>({
    secret,
    logger: false,
    handle: (n) => void seen.push(n),
  });
  server = createServer(createNodeListener(webhook));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/webhooks`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('payhook replay', () => {
  it('re-signs each captured delivery with --resign and posts it to a real server, then prints a tally', async () => {
    const result = await runCli(['replay', file, '--url', url, '--resign', secret]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      `line 1: purchase success order ${purchase.order_id} (captured 500 handler.failed) → 200 {"ok":true,"outcome":"handled"}`,
      `line 3: refund success order ${refund.order_id} (captured 200 handled) → 200 {"ok":true,"outcome":"handled"}`,
      'replayed 2: 2 answered 2xx, 0 not',
      '',
    ]);
    expect(seen.map((n) => [n.method, n.order_id])).toEqual([
      ['purchase', purchase.order_id],
      ['refund', refund.order_id],
    ]);
  });
});
