import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { SECRET } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { type Notification, PayhookModule } from '../src/index.ts';
import { NEST, nestServer, PLATFORMS } from './apps.ts';

const handled: Notification[] = [];

/** The secret comes from ConfigService, here loaded from a factory instead of the environment. */
const asyncPayhook = () =>
  PayhookModule.forRootAsync({
    imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ WEBHOOK_SECRET: SECRET })] })],
    inject: [ConfigService],
    useFactory: (config: ConfigService) => ({
      secret: config.getOrThrow<string>('WEBHOOK_SECRET'),
      logger: false,
      handle: (notification) => {
        handled.push(notification);
      },
    }),
  });

@Module({ imports: [asyncPayhook()] })
class AppModule {}

describe.each(PLATFORMS)(`${NEST}, %s platform: forRootAsync`, (platform) => {
  it('verifies with the secret the factory read from ConfigService', async () => {
    handled.length = 0;
    const server = await nestServer(platform, AppModule);
    const good = await request(server).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect([good.status, good.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    const forged = await request(server).post('/webhooks').type(FORM).send(signedForm(purchase(), 'other'));
    expect([forged.status, forged.body.error.code]).toEqual([401, 'signature.invalid']);
    expect(handled).toHaveLength(1);
  });

  it("is mounted before Nest's body parsers in an app made by Test.createTestingModule", async () => {
    const moduleRef = await Test.createTestingModule({ imports: [asyncPayhook()] }).compile();
    const app = moduleRef.createNestApplication(
      platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
      { logger: false },
    );
    await app.init();
    if (platform === 'fastify') await app.getHttpAdapter().getInstance().ready();
    try {
      // Nest's JSON parser would refuse this before payhook with its own 400.
      const res = await request(app.getHttpServer())
        .post('/webhooks')
        .set('content-type', 'application/json')
        .send('{"data":');
      expect([res.status, res.body.error?.code]).toEqual([400, 'payload.malformed']);
    } finally {
      await app.close();
    }
  });
});
