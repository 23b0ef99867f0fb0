import type { ServerResponse } from 'node:http';
import express5, { type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { SECRET } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { webhookMiddleware } from '../src/index.ts';

const delivery = signedForm(purchase(), SECRET);
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The `writeHead` wrapper of on-headers 1.0 (inside compression < 1.8.1, morgan < 1.10.1, express-session
 * < 1.18.2, still in many lockfiles): it reads an array of headers as [name, value] pairs and sets each.
 */
function onHeaders10(_req: Request, res: Response, next: NextFunction): void {
  const previous = res.writeHead;
  const wrapped = function (this: ServerResponse, statusCode: number, ...rest: unknown[]) {
    const index = typeof rest[0] === 'string' ? 1 : 0;
    const headers = rest[index];
    this.statusCode = statusCode;
    if (Array.isArray(headers)) for (const pair of headers) this.setHeader(pair[0], pair[1]);
    else if (headers)
      for (const [name, value] of Object.entries(headers)) this.setHeader(name, value as string);
    const args = [statusCode, ...rest.slice(0, index)];
    return (previous as (...a: unknown[]) => ServerResponse).apply(this, args);
  };
  res.writeHead = wrapped as typeof res.writeHead;
  next();
}

function presets(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('content-type', 'text/html');
  res.setHeader('content-length', '999');
  next();
}

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
])('%s: the answer written over headers other middleware set', (_, express) => {
  it('keeps their headers, and replaces a Content-Type and Content-Length of its own', async () => {
    const app = express();
    app.use(presets);
    app.post('/webhooks', webhookMiddleware({ secret: SECRET, logger: false, handle: () => {} }));
    const answer = await request(app).post('/webhooks').type(FORM).send(delivery);
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'content-type': JSON_TYPE,
      'content-length': String(Buffer.byteLength(answer.text)),
    });
    expect(JSON.parse(answer.text)).toEqual({ ok: true, outcome: 'handled' });
  });

  it('answers whole behind a writeHead wrapper as on-headers 1.0 installs (a 200 and a 503 with Retry-After)', async () => {
    let vaultDown = false;
    const app = express();
    app.use(onHeaders10);
    app.use(presets);
    app.post(
      '/webhooks',
      webhookMiddleware({
        secret: () => {
          if (vaultDown) throw new Error('vault unreachable');
          return SECRET;
        },
        logger: false,
        handle: () => {},
      }),
    );
    const handled = await request(app).post('/webhooks').type(FORM).send(delivery);
    vaultDown = true;
    const refused = await request(app).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect([handled.status, handled.headers['content-type']]).toEqual([200, JSON_TYPE]);
    expect([refused.status, refused.headers['content-type'], refused.headers['retry-after']]).toEqual([
      503,
      JSON_TYPE,
      '1',
    ]);
    expect(JSON.parse(refused.text).error.code).toBe('secret.unavailable');
    // No header named by a character of another header's name or value.
    for (const answer of [handled, refused]) {
      expect(Object.keys(answer.headers).filter((name) => name.length < 3)).toEqual([]);
    }
  });

  it("passes an answer it cannot write to Express's error handling instead of losing it", async () => {
    const app = express();
    app.use((_req: Request, res: Response, next: NextFunction) => {
      res.setHeader = () => {
        throw new Error('headers frozen by another middleware');
      };
      next();
    });
    app.post('/webhooks', webhookMiddleware({ secret: SECRET, logger: false, handle: () => {} }));
    app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
      res.statusCode = 500;
      res.end(`error handler: ${error.message}`);
    });
    const answer = await request(app).post('/webhooks').type(FORM).send(delivery);
    expect([answer.status, answer.text]).toEqual([
      500,
      'error handler: headers frozen by another middleware',
    ]);
  });
});
