import express5, { type Request } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { SECRET, testOptions } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { webhookMiddleware } from '../src/index.ts';

const delivery = signedForm(purchase(), SECRET);
const HANDLED = '{"ok":true,"outcome":"handled"}';

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
])('%s: where the middleware is mounted', (_, express) => {
  function recorder(path?: string) {
    const urls: string[] = [];
    const options = testOptions((_n, req: Request | undefined) => urls.push(req!.originalUrl));
    return { urls, middleware: webhookMiddleware(path === undefined ? options : { ...options, path }) };
  }
  const notFound = (_req: Request, res: express5.Response) => {
    res.status(404).send('no route');
  };

  it('on a path with app.use: handles that path, and passes every other path on untouched', async () => {
    const { urls, middleware } = recorder();
    const app = express();
    app.use('/webhooks', middleware);
    app.use(notFound);
    const hook = await request(app).post('/webhooks').type(FORM).send(delivery);
    const other = await request(app).post('/orders').type(FORM).send(delivery);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([other.status, other.text]).toEqual([404, 'no route']);
    expect(urls).toEqual(['/webhooks']);
  });

  it('on a Router mounted under a prefix', async () => {
    const { urls, middleware } = recorder();
    const router = express.Router();
    router.post('/payments', middleware);
    router.get('/status', (_req, res) => {
      res.send('router ok');
    });
    const app = express();
    app.use('/hooks', router);
    app.use(notFound);
    const hook = await request(app).post('/hooks/payments').type(FORM).send(delivery);
    const sibling = await request(app).get('/hooks/status');
    const other = await request(app).post('/hooks/other').type(FORM).send(delivery);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([sibling.status, sibling.text]).toEqual([200, 'router ok']);
    expect([other.status, other.text]).toEqual([404, 'no route']);
    expect(urls).toEqual(['/hooks/payments']);
  });

  it('at app level behind other routes and a JSON parser, which keep their own answers', async () => {
    const { urls, middleware } = recorder();
    const app = express();
    app.use(express.json());
    app.get('/health', (_req, res) => {
      res.send('ok');
    });
    app.post('/orders', (req, res) => {
      res.status(201).json({ created: (req.body as { id: number }).id });
    });
    app.post('/webhooks', middleware);
    app.use(notFound);
    const health = await request(app).get('/health');
    const order = await request(app).post('/orders').send({ id: 7 });
    const hook = await request(app).post('/webhooks').type(FORM).send(delivery);
    const get = await request(app).get('/webhooks');
    expect([health.status, health.text]).toEqual([200, 'ok']);
    expect([order.status, order.body]).toEqual([201, { created: 7 }]);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([get.status, get.text]).toEqual([404, 'no route']);
    expect(urls).toEqual(['/webhooks']);
  });

  it('at app level with path: only that path is the webhook, routes before and after it keep their answers', async () => {
    const { urls, middleware } = recorder('/webhooks');
    const app = express();
    app.get('/before', (_req, res) => {
      res.send('before ok');
    });
    app.use(middleware);
    app.get('/health', (_req, res) => {
      res.send('ok');
    });
    app.post('/orders', (_req, res) => {
      res.status(201).send('created');
    });
    app.use(notFound);
    const before = await request(app).get('/before');
    const health = await request(app).get('/health');
    const order = await request(app).post('/orders').type(FORM).send(delivery);
    const hook = await request(app).post('/webhooks?source=service').type(FORM).send(delivery);
    const get = await request(app).get('/webhooks');
    const options = await request(app).options('/webhooks');
    const nested = await request(app).post('/webhooks/extra').type(FORM).send(delivery);
    expect([before.status, before.text]).toEqual([200, 'before ok']);
    expect([health.status, health.text]).toEqual([200, 'ok']);
    expect([order.status, order.text]).toEqual([201, 'created']);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    for (const refused of [get, options]) {
      expect([refused.status, refused.headers.allow, refused.body.error.code]).toEqual([
        405,
        'POST',
        'request.method_not_allowed',
      ]);
    }
    expect([nested.status, nested.text]).toEqual([404, 'no route']);
    expect(urls).toEqual(['/webhooks?source=service']);
  });

  it('with path under a mount point: the path is relative to it, as Express routes are', async () => {
    const { middleware } = recorder('/webhooks');
    const app = express();
    app.use('/api', middleware);
    app.use(notFound);
    const hook = await request(app).post('/api/webhooks').type(FORM).send(delivery);
    const top = await request(app).post('/webhooks').type(FORM).send(delivery);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([top.status, top.text]).toEqual([404, 'no route']);
  });
});
