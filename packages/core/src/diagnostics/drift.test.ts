import diagnostics_channel from 'node:diagnostics_channel';
import { describe, expect, it, vi } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { PAYHOOK_CHANNELS } from './messages.js';

describe('drift on a delivery', () => {
  it('publishes what a verified notification carried beyond its types on payhook:drift', async () => {
    const messages: unknown[] = [];
    const listen = (message: unknown) => messages.push(message);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.drift, listen);
    try {
      const webhook = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
      const raw = purchase({ payment_id: 'pay-drift-1', refund_reason: 'asked', status: 'rejected' });
      const result = await webhook(post(formBody(raw)), undefined);
      expect([result.status, result.outcome]).toEqual([200, 'handled']);
      await webhook(post(formBody(purchase({ payment_id: 'pay-drift-2' }))), undefined);
      expect(messages).toEqual([
        {
          event: 'purchase.rejected',
          findings: [
            { kind: 'field', name: 'refund_reason' },
            { kind: 'status', name: 'rejected' },
          ],
        },
      ]);
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.drift, listen);
    }
  });

  it('logs each new finding once per process through the logger, naming it and never its value', async () => {
    const warn = vi.fn();
    const first = createWebhookHandler({
      secret: SECRET,
      logger: { warn, error: vi.fn() },
      handle: () => undefined,
    });
    const second = createWebhookHandler({
      secret: SECRET,
      logger: { warn, error: vi.fn() },
      handle: () => undefined,
    });
    const drifted = (id: string, fields: Record<string, unknown>) =>
      post(formBody(purchase({ payment_id: id, ...fields })));
    await first(drifted('pay-log-1', { loyalty_points: 'secret-ish-4411', transaction_id: null }), undefined);
    await second(drifted('pay-log-2', { loyalty_points: 'other-9', transaction_id: null }), undefined);
    await second(drifted('pay-log-3', { loyalty_points: 'x', amount: '150.25' }), undefined);
    expect(warn.mock.calls).toEqual([
      [
        '[@payhook/core] a "purchase" notification carried what payhook does not type: "transaction_id" sent as null (typed string); new field "loyalty_points". It was handled as before (everything sent stays in notification.raw); each such name is logged once per process and counted on the payhook:drift channel (docs/observability.md).',
      ],
      [
        '[@payhook/core] a "purchase" notification carried what payhook does not type: "amount" sent as string, coerced to number. It was handled as before (everything sent stays in notification.raw); each such name is logged once per process and counted on the payhook:drift channel (docs/observability.md).',
      ],
    ]);
  });

  it('escapes control and bidi characters and cuts a long method, in the log line and on payhook:drift', async () => {
    const warn = vi.fn();
    const messages: { event: string; findings: { name: string }[] }[] = [];
    const listen = (message: unknown) => messages.push(message as (typeof messages)[number]);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.drift, listen);
    try {
      const webhook = createWebhookHandler({
        secret: SECRET,
        logger: { warn, error: vi.fn() },
        handle: () => undefined,
      });
      const method = `pur\u202echase\u0085${'m'.repeat(10_000)}`;
      const raw = purchase({
        payment_id: 'pay-bidi-1',
        method,
        status: 'ok\u202e\u009b',
        'field\u202e\u0085': 1,
      });
      await webhook(post(formBody(raw)), undefined);
      const [[line]] = warn.mock.calls as [[string]];
      expect(line.length).toBeLessThan(1_000);
      const raws = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;
      expect(line).not.toMatch(raws);
      expect(line).toContain('pur\\u{202e}chase\\u{85}m');
      const [message] = messages;
      expect(message!.event.length).toBeLessThan(200);
      expect(message!.event).not.toMatch(raws);
      for (const { name } of message!.findings) {
        expect(name).not.toMatch(raws);
        expect(name.length).toBeLessThan(100); // 64 characters, a few of them escaped
      }
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.drift, listen);
    }
  });

  it('publishes nothing for a refused delivery', async () => {
    const messages: unknown[] = [];
    const listen = (message: unknown) => messages.push(message);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.drift, listen);
    try {
      const webhook = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
      const forged = formBody(purchase({ payment_id: 'pay-forged', refund_reason: 'x' }), 'not-the-secret');
      expect((await webhook(post(forged), undefined)).status).toBe(401);
      expect(messages).toEqual([]);
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.drift, listen);
    }
  });
});
