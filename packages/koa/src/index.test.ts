import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  type BuildApp,
  itAnswersEveryStatus,
  itAnswersTimeout,
  itDefersContinue,
  itRefusesRepeatedJsonFields,
  itRunsInlineHandlersInTheRequest,
} from '../../../test/adapter-conformance.ts';
import { PARSERS, VERSIONS } from '../test/parsers.ts';
import { deferContinue, parserErrorHandler, webhookMiddleware } from './index.ts';

// Where payhook reads the JSON bytes, a repeated key is seen: no parser, or one that kept the text (@koa/bodyparser's
// rawBody, koa-body's includeUnparsed). koa-body alone hands on only the object JSON.parse built.
const READS_JSON_BYTES = new Set(PARSERS.map(([name]) => name).filter((name) => name !== 'koa-body'));

describe.each(VERSIONS)('%s', (_, Koa) => {
  describe.each(PARSERS)('with %s before the middleware', (name, parsersFor) => {
    const build: BuildApp = (options) => {
      const app = new Koa();
      app.use(parserErrorHandler());
      for (const parser of parsersFor()) app.use(parser);
      app.use(webhookMiddleware({ ...options, path: '/webhooks' }));
      return app.callback();
    };
    itAnswersEveryStatus(build);
    if (READS_JSON_BYTES.has(name)) itRefusesRepeatedJsonFields(build);
  });

  describe('with no body parser', () => {
    itAnswersTimeout((options) =>
      new Koa().use(webhookMiddleware({ ...options, path: '/webhooks' })).callback(),
    );
    itDefersContinue(async (options) =>
      deferContinue(
        createServer(new Koa().use(webhookMiddleware({ ...options, path: '/webhooks' })).callback()),
      ),
    );
    itRunsInlineHandlersInTheRequest((options, { inline, inlineAny, queued }) =>
      new Koa()
        .use(
          webhookMiddleware({ ...options, path: '/webhooks' })
            .on('purchase', inline, { inline: true })
            .onAny(inlineAny, { inline: true })
            .on('purchase', queued),
        )
        .callback(),
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
