import { createServer } from 'node:http';
import type { Express, RequestHandler } from 'express';
import express5 from 'express';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';
import {
  type BuildApp,
  itAnswersEveryStatus,
  itAnswersTimeout,
  itDefersContinue,
  itRefusesRepeatedJsonFields,
  itRunsInlineHandlersInTheRequest,
} from '../../../test/adapter-conformance.ts';
import { deferContinue, parserErrorHandler, webhookMiddleware } from './index.ts';

type Parser = (e: typeof express5) => RequestHandler[];

const everything = () => true;
const parsers: [string, Parser][] = [
  ['no body parser', () => []],
  ['express.json()', (e) => [e.json()]],
  ['express.urlencoded({ extended: true })', (e) => [e.urlencoded({ extended: true })]],
  ['express.urlencoded({ extended: false })', (e) => [e.urlencoded({ extended: false })]],
  ['express.json() and express.urlencoded()', (e) => [e.json(), e.urlencoded({ extended: false })]],
  ['express.raw() for every type', (e) => [e.raw({ type: everything })]],
  ['express.text() for every type', (e) => [e.text({ type: everything })]],
  ['express.raw() and express.text() for their default types', (e) => [e.raw(), e.text()]],
];
const versions: [string, typeof express5][] = [
  ['Express 5', express5],
  ['Express 4', express4],
];

describe.each(versions)('%s', (_, express) => {
  describe.each(parsers)('with %s before the middleware', (name, parsersFor) => {
    const build: BuildApp = (options) => {
      const app: Express = express();
      for (const parser of parsersFor(express)) app.use(parser);
      app.use('/webhooks', webhookMiddleware(options), parserErrorHandler());
      return app;
    };
    itAnswersEveryStatus(build);
    // Without express.json() in front payhook reads the JSON bytes (raw, text, or the stream) and sees a repeat.
    if (!name.includes('express.json()')) itRefusesRepeatedJsonFields(build);
  });

  describe('with no body parser', () => {
    itAnswersTimeout((options) => express().use('/webhooks', webhookMiddleware(options)));
    // The README's one line: the server Express runs on, through deferContinue.
    itDefersContinue(async (options) =>
      deferContinue(createServer(express().use('/webhooks', webhookMiddleware(options)))),
    );
    itRunsInlineHandlersInTheRequest((options, { inline, inlineAny, queued }) =>
      express().use(
        '/webhooks',
        webhookMiddleware(options)
          .on('purchase', inline, { inline: true })
          .onAny(inlineAny, { inline: true })
          .on('purchase', queued),
      ),
    );
  });
});

describe('a secret read from an unset environment variable', () => {
  it('fails when the middleware is built, naming the option and the cause', () => {
    expect(process.env.PAYHOOK_UNSET_SECRET).toBeUndefined();
    expect(() => webhookMiddleware({ secret: process.env.PAYHOOK_UNSET_SECRET! })).toThrow(
      new TypeError(
        "[@payhook/core] the secret option is undefined: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id. If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.",
      ),
    );
  });
});
