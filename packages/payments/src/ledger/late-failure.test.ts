import { createWebhookHandler, type Notification } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../../core/test/fixtures.js';
import { createPaymentLedger } from './ledger.js';

// The bug of issue 44: deliveries overtake each other, and a failure delivered after the payment's success reached
// the merchant's handler, which then regressed a paid order to failed. `ordering: true`, which the ledger replaced,
// ranked success and failure alike, so nothing stopped it.

describe('a failure delivered after its payment succeeded', () => {
  it('never reaches the handler: answered 200 conflict, the success stays', async () => {
    const seen: string[] = [];
    const webhook = createWebhookHandler({
      secret: SECRET,
      logger: false,
      ledger: createPaymentLedger(),
      handle: (n: Notification) => void seen.push(n.status),
    });
    const success = await webhook(post(formBody(purchase())), undefined);
    const failure = await webhook(
      post(
        formBody(purchase({ status: 'failure', status_code: '2001', processed_at: '2026-11-22T10:15:09' })),
      ),
      undefined,
    );
    expect(success).toMatchObject({ status: 200, outcome: 'handled' });
    expect(failure).toMatchObject({ status: 200, outcome: 'conflict' });
    expect(seen).toEqual(['success']);
  });
});
