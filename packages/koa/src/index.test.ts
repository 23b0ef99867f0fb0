import { bodyParser } from '@koa/bodyparser';
import Koa3, { type Middleware } from 'koa';
import { koaBody } from 'koa-body';
import Koa2 from 'koa2';
import { describe } from 'vitest';
import { itAnswersEveryStatus } from '../../express/test/conformance.ts';
import { parserErrorHandler, webhookMiddleware } from './index.ts';

// The parsers' own types still name @types/koa 2; at runtime they are Koa middleware for both versions.
const koa = (middleware: unknown) => middleware as Middleware;

const parsers: [string, () => Middleware[]][] = [
  ['no body parser', () => []],
  ['@koa/bodyparser', () => [koa(bodyParser())]],
  [
    '@koa/bodyparser for json, form and text',
    () => [koa(bodyParser({ enableTypes: ['json', 'form', 'text'] }))],
  ],
  ['koa-body', () => [koa(koaBody())]],
  ['koa-body with includeUnparsed', () => [koa(koaBody({ includeUnparsed: true }))]],
];
const versions: [string, typeof Koa3][] = [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
];

describe.each(versions)('%s', (_, Koa) => {
  describe.each(parsers)('with %s before the middleware', (_, parsersFor) => {
    itAnswersEveryStatus((options) => {
      const app = new Koa();
      app.use(parserErrorHandler());
      for (const parser of parsersFor()) app.use(parser);
      app.use(webhookMiddleware({ ...options, path: '/webhooks' }));
      return app.callback();
    });
  });
});
