import type { FastifyInstance } from 'fastify';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import {
  expectForwardedSignatureError,
  SECRET,
  tamperedForm,
  testOptions,
} from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { WebhookError, webhookPlugin } from '../src/index.ts';
import { VERSIONS } from './parsers.ts';

const tampered = tamperedForm();

describe.each(VERSIONS)('%s: forwardErrors', (_, version) => {
  const app = async (setup?: (app: FastifyInstance) => void) => {
    const app = version.fastify();
    setup?.(app);
    await app.register(webhookPlugin({ ...testOptions(() => {}), path: '/webhooks', forwardErrors: true }));
    await app.ready();
    return app.server;
  };

  it("throws core's WebhookError, with status and expose, into Fastify's error handler", async () => {
    const seen: unknown[] = [];
    const server = await app((app) =>
      app.setErrorHandler((error, _request, reply) => {
        seen.push(error);
        return reply.code((error as WebhookError).status).send({ forwarded: (error as WebhookError).code });
      }),
    );
    const res = await request(server).post('/webhooks').type(FORM).send(tampered);
    expect([res.status, res.body]).toEqual([401, { forwarded: 'signature.invalid' }]);
    expectForwardedSignatureError(seen);
  });

  it("lets Fastify's default error handler answer the status, code and message", async () => {
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(tampered);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({
      statusCode: 401,
      code: 'signature.invalid',
      error: 'Unauthorized',
      message: expect.stringMatching(/^\[@payhook\/core\] the signature does not match/),
    });
  });

  it("forwards core's 415 for a Content-Type header Fastify cannot parse, as any other refusal", async () => {
    const seen: unknown[] = [];
    const server = await app((app) =>
      app.setErrorHandler((error, _request, reply) => {
        seen.push(error);
        return reply.code((error as WebhookError).status).send({ forwarded: (error as WebhookError).code });
      }),
    );
    const res = await request(server).post('/webhooks').set('content-type', 'garbage').send(tampered);
    expect([res.status, res.body]).toEqual([415, { forwarded: 'media_type.unsupported' }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(WebhookError);
  });

  it("has Fastify's default error handler send the refusal's headers: Allow on 405", async () => {
    const res = await request(await app()).get('/webhooks');
    expect([res.status, res.headers.allow]).toEqual([405, 'POST']);
  });

  it('still answers successes itself', async () => {
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(signedForm(purchase(), SECRET));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
  });
});
