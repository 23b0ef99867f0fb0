import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { SECRET, testOptions } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { webhookMiddleware } from '../src/index.ts';
import { VERSIONS } from './parsers.ts';

const delivery = signedForm(purchase(), SECRET);
const HANDLED = '{"ok":true,"outcome":"handled"}';

describe.each(VERSIONS)('%s: where the middleware is mounted', (_, Koa) => {
  function recorder(path?: string) {
    const paths: string[] = [];
    const options = testOptions((_n, ctx: ParameterizedContext | undefined) => paths.push(ctx!.path));
    return { paths, middleware: webhookMiddleware({ ...options, path }) };
  }
  const notFound = (ctx: ParameterizedContext) => {
    ctx.status = 404;
    ctx.body = 'no route';
  };

  it('at app level with `path`, behind other middleware: handles that path, and passes every other on untouched', async () => {
    const { paths, middleware } = recorder('/webhooks');
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path === '/health') ctx.body = 'ok';
      else await next();
    });
    app.use(middleware);
    app.use(notFound);
    const server = app.callback();
    const health = await request(server).get('/health');
    const hook = await request(server).post('/webhooks').type(FORM).send(delivery);
    const other = await request(server).post('/webhooks/other').type(FORM).send(delivery);
    expect([health.status, health.text]).toEqual([200, 'ok']);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([other.status, other.text]).toEqual([404, 'no route']);
    expect(paths).toEqual(['/webhooks']);
  });

  it('on a @koa/router route under a prefix, beside other routes', async () => {
    const { paths, middleware } = recorder();
    const router = new Router({ prefix: '/hooks' });
    router.post('/payments', middleware);
    router.get('/status', (ctx) => {
      ctx.body = 'router ok';
    });
    const app = new Koa();
    app.use(router.routes());
    app.use(notFound);
    const server = app.callback();
    const hook = await request(server).post('/hooks/payments').type(FORM).send(delivery);
    const sibling = await request(server).get('/hooks/status');
    const other = await request(server).post('/hooks/other').type(FORM).send(delivery);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([sibling.status, sibling.text]).toEqual([200, 'router ok']);
    expect([other.status, other.text]).toEqual([404, 'no route']);
    expect(paths).toEqual(['/hooks/payments']);
  });
});
