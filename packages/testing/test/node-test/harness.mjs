// Run by `node --test` on the built dist (see ../node-test.test.ts): the harness needs no vitest globals.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { createTestHandler, fakePurchase, postWebhook, redeliver } from '@payhook/testing';

const secret = 'node-test-secret';

function receiver() {
  const app = createTestHandler();
  const listener = createNodeListener(createWebhookHandler({ secret, logger: false, handle: app.handle }));
  return { app, listener };
}

test('a purchase is handled once and its redelivery is a duplicate', async () => {
  const { app, listener } = receiver();
  const purchase = fakePurchase();
  (await postWebhook(listener, purchase, { secret })).expectHandled();
  (await postWebhook(listener, redeliver(purchase), { secret })).expectDuplicate();
  app.expectHandledOnce(purchase);
});

test('a tampered delivery is refused with signature.invalid on a node:http server', async () => {
  const { app, listener } = receiver();
  const server = createServer(listener);
  try {
    const res = await postWebhook(server, fakePurchase(), { secret, variant: 'tampered' });
    res.expectRefused('signature.invalid');
    assert.equal(res.status, 401);
    assert.equal(app.calls.length, 0);
  } finally {
    server.close();
  }
});

test('a failed expectation is a plain Error with the answer in its message', async () => {
  const { listener } = receiver();
  const res = await postWebhook(listener, fakePurchase(), { secret });
  assert.throws(() => res.expectDuplicate(), {
    name: 'Error',
    message:
      '[@payhook/testing] POST /webhooks (exact): expected 200 with outcome "duplicate", got 200 {"ok":true,"outcome":"handled"}',
  });
});
