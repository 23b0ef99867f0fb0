import express5, { type ErrorRequestHandler } from 'express';
import express4 from 'express4';
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
import { webhookMiddleware } from '../src/index.ts';

const tampered = tamperedForm();

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
])('%s: forwardErrors', (_, express) => {
  const app = (errorHandler?: ErrorRequestHandler) => {
    const app = express();
    app.use('/webhooks', webhookMiddleware({ ...testOptions(() => {}), forwardErrors: true }));
    if (errorHandler) app.use(errorHandler);
    return app;
  };

  it("hands the refusal to next(err) as core's WebhookError with status and expose", async () => {
    const seen: unknown[] = [];
    const res = await request(
      app((error, _req, res, _next) => {
        seen.push(error);
        res.status(error.status).json({ forwarded: error.code });
      }),
    )
      .post('/webhooks')
      .type(FORM)
      .send(tampered);
    expect([res.status, res.body]).toEqual([401, { forwarded: 'signature.invalid' }]);
    expectForwardedSignatureError(seen);
  });

  it("gives Express's final handler the status to answer", async () => {
    const res = await request(app()).post('/webhooks').type(FORM).send(tampered);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  });

  it("has Express's final handler send the refusal's headers: Allow on 405", async () => {
    const res = await request(app()).get('/webhooks');
    expect([res.status, res.headers.allow]).toEqual([405, 'POST']);
  });

  it('still answers successes itself', async () => {
    const res = await request(app()).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
  });
});
