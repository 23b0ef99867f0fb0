import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  itAnswersEveryStatus,
  itAnswersTimeout,
  itDefersContinue,
  itRefusesRepeatedJsonFields,
} from '../../../test/adapter-conformance.ts';
import { PARSERS, VERSIONS } from '../test/parsers.ts';
import { deferContinue, parserErrorHandler, webhookMiddleware } from './index.ts';

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
    itRefusesRepeatedJsonFields((options) =>
      new Koa().use(webhookMiddleware({ ...options, path: '/webhooks' })).callback(),
    );
    itDefersContinue(async (options) =>
      deferContinue(
        createServer(new Koa().use(webhookMiddleware({ ...options, path: '/webhooks' })).callback()),
      ),
    );
  });
});

describe('a secret read from an unset environment variable', () => {
  it('fails when the middleware is built, naming the option and the cause', () => {
    expect(process.env.PAYHOOK_UNSET_SECRET).toBeUndefined();
    expect(() => webhookMiddleware({ secret: process.env.PAYHOOK_UNSET_SECRET!, path: '/webhooks' })).toThrow(
      new TypeError(
        "[@payhook/core] the secret option is undefined: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id. If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.",
      ),
    );
  });
});
