import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { SECRET, testOptions } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { webhookPlugin } from '../src/index.ts';
import { VERSIONS } from './parsers.ts';

const delivery = signedForm(purchase(), SECRET);
const HANDLED = '{"ok":true,"outcome":"handled"}';

describe.each(VERSIONS)('%s: where the plugin is registered', (_, version) => {
  function recorder(path?: string) {
    const urls: string[] = [];
    const options = testOptions((_n, request: FastifyRequest | undefined) => urls.push(request!.url));
    return { urls, plugin: webhookPlugin(path === undefined ? options : { ...options, path }) };
  }
  const ready = async (app: FastifyInstance) => {
    await app.ready();
    return app.server;
  };

  it("beside other routes, which keep the app's JSON and form parsers and its 415 for other types", async () => {
    const { urls, plugin } = recorder('/webhooks');
    const app = version.fastify();
    await app.register(version.formbody);
    app.post('/orders', async (request, reply) => reply.code(201).send({ got: request.body }));
    await app.register(plugin);
    app.get('/health', async () => 'ok');
    const server = await ready(app);
    const json = await request(server).post('/orders').send({ id: 7 });
    const form = await request(server).post('/orders').type(FORM).send('id=8');
    const xml = await request(server)
      .post('/orders')
      .set('content-type', 'application/xml')
      .send('<id>9</id>');
    const hook = await request(server).post('/webhooks?source=service').type(FORM).send(delivery);
    const health = await request(server).get('/health');
    const other = await request(server).post('/webhooks/other').type(FORM).send(delivery);
    expect([json.status, json.body]).toEqual([201, { got: { id: 7 } }]);
    expect([form.status, form.body]).toEqual([201, { got: { id: '8' } }]);
    expect([xml.status, xml.body.code]).toEqual([415, 'FST_ERR_CTP_INVALID_MEDIA_TYPE']);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect([health.status, health.text]).toEqual([200, 'ok']);
    expect(other.status).toBe(404);
    expect(urls).toEqual(['/webhooks?source=service']);
  });

  it('answers every other method on its path with 405 and Allow: POST', async () => {
    const app = version.fastify();
    await app.register(webhookPlugin({ ...testOptions(() => {}), path: '/webhooks' }));
    const server = await ready(app);
    for (const method of ['get', 'options', 'put', 'delete', 'patch'] as const) {
      const res = await request(server)[method]('/webhooks');
      expect([method, res.status, res.headers.allow, res.body.error.code]).toEqual([
        method,
        405,
        'POST',
        'request.method_not_allowed',
      ]);
    }
  });

  it("under a register prefix: `path` is relative to it, and left out the route is the prefix's own", async () => {
    const nested = recorder('/payments');
    const own = recorder();
    const app = version.fastify();
    await app.register(nested.plugin, { prefix: '/hooks' });
    await app.register(own.plugin, { prefix: '/webhooks' });
    const server = await ready(app);
    const hook = await request(server).post('/hooks/payments').type(FORM).send(delivery);
    const top = await request(server).post('/payments').type(FORM).send(delivery);
    const prefixOnly = await request(server).post('/webhooks').type(FORM).send(delivery);
    expect([hook.status, hook.text]).toEqual([200, HANDLED]);
    expect(top.status).toBe(404);
    expect([prefixOnly.status, prefixOnly.text]).toEqual([200, HANDLED]);
    expect([nested.urls, own.urls]).toEqual([['/hooks/payments'], ['/webhooks']]);
  });

  it('reads the body an app-wide preParsing hook hands on, as fastify-raw-body and decompressors replace it', async () => {
    const { urls, plugin } = recorder('/webhooks');
    const app = version.fastify();
    const seen: string[] = [];
    app.addHook('preParsing', async (request, _reply, payload) => {
      const chunks: Buffer[] = [];
      for await (const chunk of payload) chunks.push(chunk as Buffer);
      const raw = Buffer.concat(chunks);
      seen.push(`${request.url} ${raw.length}`);
      return Readable.from([raw]);
    });
    await app.register(plugin);
    const res = await request(await ready(app))
      .post('/webhooks')
      .type(FORM)
      .send(delivery);
    expect([res.status, res.text]).toEqual([200, HANDLED]);
    expect(seen).toEqual([`/webhooks ${Buffer.byteLength(delivery)}`]);
    expect(urls).toEqual(['/webhooks']);
  });

  it("reads past Fastify's bodyLimit up to maxBodyBytes, and hands handlers the request with the app's decorators and the body stream it read", async () => {
    const tenants: unknown[] = [];
    const bodies: boolean[] = [];
    const app = version.fastify({ bodyLimit: 100 });
    app.decorateRequest('tenant', 'shop-1');
    const plugin = webhookPlugin({
      ...testOptions((_n, request: FastifyRequest | undefined) => {
        tenants.push((request as { tenant?: string }).tenant);
        bodies.push(request!.body instanceof Readable && request!.body.readableEnded);
      }),
      path: '/webhooks',
    });
    await app.register(plugin);
    const res = await request(await ready(app))
      .post('/webhooks')
      .type(FORM)
      .send(delivery);
    expect(Buffer.byteLength(delivery)).toBeGreaterThan(100);
    expect([res.status, res.text]).toEqual([200, HANDLED]);
    expect(tenants).toEqual(['shop-1']);
    expect(bodies).toEqual([true]);
  });

  it("is named @payhook/fastify for other plugins' dependencies, and asks Fastify for 4.x or 5.x", async () => {
    const plugin = webhookPlugin({ ...testOptions(() => {}), path: '/webhooks' });
    expect((plugin as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')]).toMatchObject({
      name: '@payhook/fastify',
      fastify: '4.x || 5.x',
      encapsulate: true,
    });
    const app = version.fastify();
    await app.register(plugin);
    await app.ready();
    expect(app.hasPlugin('@payhook/fastify')).toBe(true);
  });

  it('answers a Content-Type header Fastify cannot parse as core answers any type it does not take', async () => {
    const app = version.fastify();
    await app.register(webhookPlugin({ ...testOptions(() => {}), path: '/webhooks' }));
    const server = await ready(app);
    for (const type of ['garbage', ';;']) {
      const res = await request(server).post('/webhooks').set('content-type', type).send(delivery);
      expect([type, res.status, res.body.error?.code]).toEqual([type, 415, 'media_type.unsupported']);
    }
  });

  it('refuses a path that does not start with /, as every adapter does', () => {
    expect(() => webhookPlugin({ ...testOptions(() => {}), path: 'webhooks' })).toThrow(
      '[@payhook/core] path must be a string that starts with /',
    );
  });
});
