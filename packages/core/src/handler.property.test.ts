import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signedForm } from '../../../test/support/signed-form.ts';
import { createWebhookHandler } from './handler.js';
import type { Notification } from './notification/types.js';

const contentTypes = fc.oneof(
  fc.constantFrom(
    'application/x-www-form-urlencoded',
    'application/json',
    'application/x-www-form-urlencoded; charset=utf-8',
    'text/plain',
    '',
  ),
  fc.string(),
);

describe('createWebhookHandler properties', () => {
  it('answers 4xx and never throws for any bytes under any content type', async () => {
    const handler = createWebhookHandler({
      secret: 'property-secret',
      logger: false,
      handle: () => undefined,
    });
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), contentTypes, async (bytes, type) => {
        const result = await handler(
          { method: 'POST', headers: type ? { 'content-type': type } : {}, body: Buffer.from(bytes) },
          undefined,
        );
        expect(result.status).toBeGreaterThanOrEqual(400);
        expect(result.status).toBeLessThan(500);
        expect(JSON.parse(result.body).ok).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips sign, verify and parse for any JSON object and any secret', async () => {
    const required = fc.record({
      payment_id: fc.uuid(),
      order_id: fc.string({ minLength: 1, maxLength: 256 }),
      pos_id: fc.uuid(),
      mode: fc.constantFrom('direct', 'hosted'),
      method: fc.constantFrom('purchase', 'auth', 'credit', 'p2p', 'lookup', 'payout'),
      amount: fc.double({ min: 0.01, max: 1e9, noNaN: true }),
      currency: fc.constantFrom('UAH', 'EUR', 'XTS'),
      status: fc.string({ minLength: 1 }),
      created_at: fc.constant('2026-11-22T10:15:00'),
    });
    const extra = fc.dictionary(
      fc
        .string()
        .filter(
          (key) =>
            !/^(payment_id|order_id|pos_id|mode|method|amount|currency|status|created_at|kind|raw|status_code|transaction_id|operation_id|processed_amount|fee|fixed_fee|percent_fee|recurring|limit_info|user_action_required)$/.test(
              key,
            ),
        ),
      fc.jsonValue(),
    );
    await fc.assert(
      fc.asyncProperty(required, extra, fc.string({ minLength: 1 }), async (fields, more, secret) => {
        const sent = { ...more, ...fields };
        let received: Notification | undefined;
        const handler = createWebhookHandler({
          secret,
          logger: false,
          store: false,
          handle: (n) => {
            received = n;
          },
        });
        const body = signedForm(sent, secret);
        const result = await handler(
          { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
          undefined,
        );
        expect(result.status).toBe(200);
        expect(received?.raw).toEqual(JSON.parse(JSON.stringify(sent)));
        expect(received?.payment_id).toBe(fields.payment_id);
      }),
      { numRuns: 200 },
    );
  });
});
