import { bodyParser } from '@koa/bodyparser';
import { describe, expect, it } from 'vitest';
import {
  ANSWERS_WITHOUT_PARSER,
  answersTo,
  MAX_BODY_BYTES,
  probesAround,
  testOptions,
} from '../../../test/adapter-conformance.ts';
import { parserErrorHandler, webhookMiddleware } from '../src/index.ts';
import { koa, PARSERS, VERSIONS } from './parsers.ts';

const PARSER_LIMIT = 1024;
const probes = probesAround(PARSER_LIMIT);
const withParsers = PARSERS.filter(([name]) => name !== 'no body parser');

describe.each(VERSIONS)('%s: a body parser with a smaller limit placed before the middleware', (_, Koa) => {
  const webhook = () => webhookMiddleware({ ...testOptions(() => {}), path: '/webhooks' });
  const without = () => new Koa().use(webhook()).callback();

  it('without any parser, core answers every probe', async () => {
    expect(MAX_BODY_BYTES).toBeGreaterThan(PARSER_LIMIT + 200);
    expect(await answersTo(without, probes)).toEqual(ANSWERS_WITHOUT_PARSER);
  });

  describe.each(withParsers)('%s', (_, parsersFor) => {
    it("with parserErrorHandler first, the parser's refusal of a medium delivery is core's 413 payload.too_large, and everything else is the same", async () => {
      const app = () => {
        const app = new Koa().use(parserErrorHandler());
        for (const parser of parsersFor(PARSER_LIMIT)) app.use(parser);
        return app.use(webhook()).callback();
      };
      expect(await answersTo(app, probes)).toEqual({
        ...(await answersTo(without, probes)),
        medium: [413, 'payload.too_large'],
      });
    });

    it('mounting the middleware before the parser gives exactly the answers of no parser at all', async () => {
      const app = () => {
        const app = new Koa().use(webhook());
        for (const parser of parsersFor(PARSER_LIMIT)) app.use(parser);
        return app.callback();
      };
      expect(await answersTo(app, probes)).toEqual(await answersTo(without, probes));
    });
  });

  it('a parser for another type (@koa/bodyparser for JSON only, tiny limit) gives the same answers to form deliveries', async () => {
    const app = () => {
      const app = new Koa().use(parserErrorHandler());
      app.use(koa(bodyParser({ enableTypes: ['json'], jsonLimit: 10 })));
      return app.use(webhook()).callback();
    };
    const forms = probes.filter((p) => p.type.startsWith('application/x-www'));
    expect(await answersTo(app, forms)).toEqual(await answersTo(without, forms));
  });

  it("without parserErrorHandler, the parser's refusals are Koa's own (same status, text body)", async () => {
    const app = () => {
      const app = new Koa();
      app.silent = true;
      for (const parser of PARSERS[1]![1](PARSER_LIMIT)) app.use(parser);
      return app.use(webhook()).callback();
    };
    const answers = await answersTo(app, probes);
    expect(answers.medium).toEqual([413, 'request entity too large']);
    expect(answers['malformed JSON']?.[0]).toBe(400);
  });
});
