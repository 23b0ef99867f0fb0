import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { createTestHandler, fakePurchase, postWebhook } from '@payhook/testing';
import { describe, expect, it } from 'vitest';
import { PayhookModule } from '../src/index.ts';
import { NEST, PLATFORMS } from './apps.ts';

const secret = 'post-webhook-secret';
const recorder = createTestHandler();

@Module({ imports: [PayhookModule.forRoot({ secret, logger: false, handle: recorder.handle })] })
class AppModule {}

describe.each(PLATFORMS)(`${NEST}, %s platform: postWebhook(nestApp, …)`, (platform) => {
  it('posts to the Nest app itself (init() and, on Fastify, ready() are run for the test)', async () => {
    const app = await NestFactory.create(
      AppModule,
      platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false, abortOnError: false },
    );
    const purchase = fakePurchase();
    (await postWebhook(app, purchase, { secret })).expectHandled();
    (await postWebhook(app, purchase, { secret })).expectDuplicate();
    expect(recorder.countHandled(purchase)).toBe(1);
    await app.close();
  });
});
