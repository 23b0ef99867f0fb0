import { createTestHandler, fakePurchase, postWebhook } from '@payhook/testing';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { webhookPlugin } from '../src/index.ts';

const secret = 'post-webhook-secret';

describe('postWebhook(fastifyApp, …)', () => {
  it('posts to a Fastify app, awaiting ready() itself', async () => {
    const app = Fastify();
    const recorder = createTestHandler();
    await app.register(webhookPlugin({ secret, path: '/webhooks', handle: recorder.handle, logger: false }));
    const purchase = fakePurchase();
    (await postWebhook(app, purchase, { secret })).expectHandled();
    (await postWebhook(app, purchase, { secret })).expectDuplicate();
    expect(recorder.countHandled(purchase)).toBe(1);
    await app.close();
  });

  it('posts to app.server after ready(), as supertest takes it', async () => {
    const app = Fastify();
    await app.register(webhookPlugin({ secret, path: '/hooks', logger: false, handle: () => {} }));
    await app.ready();
    const res = await postWebhook(app.server, fakePurchase(), { secret, path: '/hooks' });
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    await app.close();
  });
});
