import express5 from 'express';
import express4 from 'express4';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import {
  ANSWERS_WITHOUT_PARSER,
  answersTo,
  MAX_BODY_BYTES,
  probesAround,
  SECRET,
  testOptions,
} from '../../../test/adapter-conformance.ts';
import { envelope, FORM } from '../../../test/support/signed-form.ts';
import { parserErrorHandler, webhookMiddleware } from '../src/index.ts';

const PARSER_LIMIT = 1024;
const probes = probesAround(PARSER_LIMIT);
const options = () => testOptions(() => {});

describe.each([
  ['Express 5', express5],
  ['Express 4', express4],
])(
  '%s: a body parser with a smaller limit, or for another type, placed before the middleware',
  (_, express) => {
    const without = () => {
      const app = express();
      app.use('/webhooks', webhookMiddleware(options()));
      return app;
    };

    it('without any parser, core answers every probe', async () => {
      expect(MAX_BODY_BYTES).toBeGreaterThan(PARSER_LIMIT + 200);
      expect(await answersTo(without, probes)).toEqual(ANSWERS_WITHOUT_PARSER);
    });

    it('a parser for another type (express.json with a tiny limit) gives the same answers to form deliveries', async () => {
      const app = () => {
        const app = express();
        app.use(express.json({ limit: 10 }));
        app.use('/webhooks', webhookMiddleware(options()), parserErrorHandler());
        return app;
      };
      const forms = probes.filter((p) => p.type.startsWith('application/x-www'));
      expect(await answersTo(app, forms)).toEqual(await answersTo(without, forms));
    });

    it("with parserErrorHandler, a smaller-limit parser's refusal of a medium delivery is core's 413 payload.too_large, and everything else is the same", async () => {
      const app = () => {
        const app = express();
        app.use(
          express.urlencoded({ extended: false, limit: PARSER_LIMIT }),
          express.json({ limit: PARSER_LIMIT }),
        );
        app.use('/webhooks', webhookMiddleware(options()), parserErrorHandler());
        return app;
      };
      expect(await answersTo(app, probes)).toEqual({
        ...(await answersTo(without, probes)),
        medium: [413, 'payload.too_large'],
      });
    });

    it("without parserErrorHandler, the parser's refusals are Express's own (same status, HTML body)", async () => {
      const app = () => {
        const app = express();
        app.use(
          express.urlencoded({ extended: false, limit: PARSER_LIMIT }),
          express.json({ limit: PARSER_LIMIT }),
        );
        app.use('/webhooks', webhookMiddleware(options()));
        return app;
      };
      const answers = await answersTo(app, probes);
      expect(answers.medium?.[0]).toBe(413);
      expect(answers['malformed JSON']?.[0]).toBe(400);
      expect(answers.medium?.[1]).toMatch(/^<!DOCTYPE html>/);
    });

    it('mounting the middleware before the parser gives exactly the answers of no parser at all', async () => {
      const app = () => {
        const app = express();
        app.use('/webhooks', webhookMiddleware(options()));
        app.use(
          express.urlencoded({ extended: false, limit: PARSER_LIMIT }),
          express.json({ limit: PARSER_LIMIT }),
        );
        return app;
      };
      expect(await answersTo(app, probes)).toEqual(await answersTo(without, probes));
    });

    it('refuses a malformed percent-escape with and without a urlencoded parser (400 alone, 401 behind it)', async () => {
      const { signature } = envelope(purchase(), SECRET);
      const probe = [
        { name: 'escape', type: FORM, body: `data=%ZZ&signature=${encodeURIComponent(signature)}` },
      ];
      const behind = () => {
        const app = express();
        app.use(express.urlencoded({ extended: false }));
        app.use('/webhooks', webhookMiddleware(options()), parserErrorHandler());
        return app;
      };
      expect(await answersTo(without, probe)).toEqual({ escape: [400, 'payload.malformed'] });
      expect(await answersTo(behind, probe)).toEqual({ escape: [401, 'signature.invalid'] });
    });
  },
);
