import type { ParameterizedContext } from 'koa';
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
import { type WebhookError, webhookMiddleware } from '../src/index.ts';
import { VERSIONS } from './parsers.ts';

const tampered = tamperedForm();

describe.each(VERSIONS)('%s: forwardErrors', (_, Koa) => {
  const app = (catcher?: (error: unknown, ctx: ParameterizedContext) => void) => {
    const app = new Koa();
    if (catcher) {
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (error) {
          catcher(error, ctx);
        }
      });
    }
    app.use(webhookMiddleware({ ...testOptions(() => {}), forwardErrors: true }));
    return app.callback();
  };

  it("throws core's WebhookError, with status and expose, into Koa's error flow", async () => {
    const seen: unknown[] = [];
    const res = await request(
      app((error, ctx) => {
        seen.push(error);
        ctx.status = (error as WebhookError).status;
        ctx.body = { forwarded: (error as WebhookError).code };
      }),
    )
      .post('/webhooks')
      .type(FORM)
      .send(tampered);
    expect([res.status, res.body]).toEqual([401, { forwarded: 'signature.invalid' }]);
    expectForwardedSignatureError(seen);
  });

  it("lets Koa's default error handler answer the status and, as expose is true, the message", async () => {
    const res = await request(app()).post('/webhooks').type(FORM).send(tampered);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toMatch(/^\[@payhook\/core\] the signature does not match/);
  });

  it("has Koa's default error handler send the refusal's headers: Allow on 405", async () => {
    const res = await request(app()).get('/webhooks');
    expect([res.status, res.headers.allow]).toEqual([405, 'POST']);
  });

  it('still answers successes itself', async () => {
    const res = await request(app()).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
  });
});
