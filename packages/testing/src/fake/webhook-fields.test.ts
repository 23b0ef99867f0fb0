import { findDrift, parseNotification } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { TEST_CARDS } from './outcomes.js';
import { FakeService } from './service.js';
import type { WebhookMessage } from './transport.js';

const SUB_MERCHANT = '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20';

describe("the fake's webhooks carry only what the spec shows", () => {
  it('a split purchase: the response echoes split and server_url (2.1), the webhook does not, and drift is silent', async () => {
    const sent: WebhookMessage[] = [];
    const fake = new FakeService({
      secret: 'split-webhook-secret',
      seed: 5,
      transport: async (message) => {
        sent.push(message);
        return { status: 200, body: '' };
      },
    });
    const created = fake.createPayment(
      {
        pos_id: fake.project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 60,
        currency: 'XTS',
        description: 'Marketplace order',
        order_id: 'split-1',
        order_3ds_bypass: 'supported',
        customer_fname: 'Olena',
        customer_lname: 'Shevchenko',
        customer_email: 'olena@example.com',
        customer_phone: '+380501234567',
        customer_ip: '10.0.0.7',
        server_url: 'http://127.0.0.1:9/webhooks',
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2031,
        card_cvv: '737',
        split: [{ amount: 60, sub_merchant_id: SUB_MERCHANT }],
      },
      { split: true },
    );
    expect(created.mode === 'direct' && created.record).toMatchObject({
      split: [{ amount: 60, sub_merchant_id: SUB_MERCHANT }],
      server_url: 'http://127.0.0.1:9/webhooks',
    });
    await fake.idle();
    expect(sent).toHaveLength(1);
    const notification = JSON.parse(Buffer.from(sent[0]!.data, 'base64url').toString('utf8'));
    expect(notification).not.toHaveProperty('split');
    expect(notification).not.toHaveProperty('server_url');
    expect(findDrift(parseNotification(notification))).toBeUndefined();
  });
});
