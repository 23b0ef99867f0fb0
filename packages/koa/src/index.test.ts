import { describe } from 'vitest';
import { itAnswersEveryStatus, itAnswersTimeout } from '../../express/test/conformance.ts';
import { PARSERS, VERSIONS } from '../test/parsers.ts';
import { parserErrorHandler, webhookMiddleware } from './index.ts';

describe.each(VERSIONS)('%s', (_, Koa) => {
  describe.each(PARSERS)('with %s before the middleware', (_, parsersFor) => {
    itAnswersEveryStatus((options) => {
      const app = new Koa();
      app.use(parserErrorHandler());
      for (const parser of parsersFor()) app.use(parser);
      app.use(webhookMiddleware({ ...options, path: '/webhooks' }));
      return app.callback();
    });
  });

  describe('with no body parser', () => {
    itAnswersTimeout((options) =>
      new Koa().use(webhookMiddleware({ ...options, path: '/webhooks' })).callback(),
    );
  });
});
