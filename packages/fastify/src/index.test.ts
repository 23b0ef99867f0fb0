import { describe, expect, it } from 'vitest';
import {
  itAnswersEveryStatus,
  itAnswersTimeout,
  itDefersContinue,
  itRefusesRepeatedJsonFields,
  itRunsInlineHandlersInTheRequest,
} from '../../../test/adapter-conformance.ts';
import { PARSERS, VERSIONS } from '../test/parsers.ts';
import { deferContinue, type FastifyWebhookOptions, webhookPlugin } from './index.ts';

describe.each(VERSIONS)('%s', (_, version) => {
  describe.each(PARSERS)('with %s registered before the plugin', (_, parsersFor) => {
    const build = async (options: FastifyWebhookOptions) => {
      const app = version.fastify();
      await parsersFor(1024)(app, version);
      await app.register(webhookPlugin({ ...options, path: '/webhooks' }));
      await app.ready();
      return app.server;
    };
    itAnswersEveryStatus(build);
    // The plugin's route reads its own bytes whatever the app parses elsewhere, so a repeat is seen everywhere.
    itRefusesRepeatedJsonFields(build);
  });

  describe('with no parser of its own', () => {
    // Fastify lets Node send 100 Continue before any hook runs unless its server goes through deferContinue.
    itDefersContinue(async (options) => {
      const app = version.fastify();
      await app.register(webhookPlugin({ ...options, path: '/webhooks' }));
      await app.ready();
      return deferContinue(app.server);
    });
    itAnswersTimeout(async (options) => {
      const app = version.fastify();
      await app.register(webhookPlugin({ ...options, path: '/webhooks' }));
      await app.ready();
      return app.server;
    });
    itRunsInlineHandlersInTheRequest(async (options, { inline, inlineAny, queued }) => {
      const app = version.fastify();
      await app.register(
        webhookPlugin({ ...options, path: '/webhooks' })
          .on('purchase', inline, { inline: true })
          .onAny(inlineAny, { inline: true })
          .on('purchase', queued),
      );
      await app.ready();
      return app.server;
    });
  });
});

describe('a secret read from an unset environment variable', () => {
  it('fails when the plugin is built, naming the option and the cause', () => {
    expect(process.env.PAYHOOK_UNSET_SECRET).toBeUndefined();
    expect(() => webhookPlugin({ secret: process.env.PAYHOOK_UNSET_SECRET!, path: '/webhooks' })).toThrow(
      new TypeError(
        "[@payhook/core] the secret option is undefined: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id. If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.",
      ),
    );
  });
});
