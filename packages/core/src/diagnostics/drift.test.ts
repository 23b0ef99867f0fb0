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
