import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakePurchase } from '../fixtures/primary.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'send-linked-secret';

describe('payhook send: linked events', () => {
  const received: Notification[] = [];
  let server: Server;
  let url: string;
  const purchase = fakePurchase(
    { order_id: 'order-linked', amount: 80, currency: 'EUR' },
    { seed: 'linked' },
  );
  const file = join(tmpdir(), `payhook-send-of-${process.pid}.json`);

  beforeAll(async () => {
    writeFileSync(file, JSON.stringify(purchase));
    const webhook = createWebhookHandler<IncomingMessage>({
      secret,
      logger: false,
      handle: (notification) => void received.push(notification),
    });
    server = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  });
  afterAll(async () => {
    rmSync(file, { force: true });
    await new Promise((resolve) => server.close(resolve));
  });

  const send = async (args: string[], input = '') => {
    const { io, out, err } = memoryIO(input, { PAYHOOK_SECRET: secret });
    received.length = 0;
    const code = await runCli(['send', ...args, '--url', url], io);
    return { code, out, err };
  };

  it('sends a refund of the payment --of names (a file, standard input or the JSON text)', async () => {
    for (const of of [file, '-', JSON.stringify(purchase)]) {
      const { code } = await send(['refund', '--of', of], of === '-' ? JSON.stringify(purchase) : '');
      expect(code).toBe(0);
      expect(
        received.map((n) => [n.method, n.payment_id, n.order_id, n.pos_id, n.amount, n.currency]),
      ).toEqual([['refund', purchase.payment_id, 'order-linked', purchase.pos_id, 80, 'EUR']]);
    }
  });

  it('sends charges 1 to 3 of one subscription: one payment and order, three transactions 30 days apart', async () => {
    const { code, out } = await send(['recurring.charge', '--subscription', 'sub-42', '--count', '3']);
    expect(code).toBe(0);
    expect(out.at(-1)).toBe('sent 3: 3 handled');
    const charges = received.map((n) => ({
      payment: n.payment_id,
      order: n.order_id,
      recurring: (n as { recurring?: unknown }).recurring,
      at: n.created_at.slice(0, 10),
    }));
    expect(new Set(charges.map((c) => `${c.payment} ${c.order}`)).size).toBe(1);
    expect(charges.map((c) => [c.recurring, c.at])).toEqual([
      [{ id: 'sub-42', status: 'active' }, '2025-03-14'],
      [{ id: 'sub-42', status: 'active' }, '2025-04-13'],
      [{ id: 'sub-42', status: 'active' }, '2025-05-13'],
    ]);
    expect(new Set(received.map((n) => n.transaction_id)).size).toBe(3);
  });

  it('refuses --of on a primary event and --subscription on a non-recurring one, with exit 2', async () => {
    const of = await send(['purchase', '--of', file]);
    expect([of.code, of.err[0]]).toEqual([
      2,
      'payhook send: --of links a capture, void or refund to its payment, not purchase.success.',
    ]);
    const sub = await send(['refund', '--subscription', 's']);
    expect([sub.code, sub.err[0]]).toEqual([
      2,
      'payhook send: --subscription applies to recurring.charge and recurring.failure, not refund.success.',
    ]);
    const bad = await send(['refund', '--of', '{"amount":1}']);
    expect([bad.code, bad.err[0]]).toEqual([
      2,
      'payhook send: --of must be a payment notification with a payment_id.',
    ]);
    expect(received).toEqual([]);
  });

  it('suggests the event, command or option meant by a misspelling', async () => {
    expect((await send(['purchase.sucess'])).err[0]).toBe(
      'payhook send: unknown event "purchase.sucess". Did you mean "purchase.success"? See the list in --help.',
    );
    expect((await send(['refnud'])).err[0]).toBe(
      'payhook send: unknown event "refnud". Did you mean "refund"? See the list in --help.',
    );
    expect((await send(['teapot'])).err[0]).toBe(
      'payhook send: unknown event "teapot". See the list in --help.',
    );
    expect((await send(['refund', '--subscriptoin', 'x'])).err[0]).toBe(
      'payhook send: unknown option --subscriptoin. Did you mean "--subscription"?',
    );
    const { io, err } = memoryIO();
    expect(await runCli(['sned'], io)).toBe(2);
    expect(err[0]).toBe('payhook: unknown command "sned". Did you mean "send"?');
  });
});
