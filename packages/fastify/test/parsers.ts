import formbody8 from '@fastify/formbody';
import fastify5, { type FastifyInstance } from 'fastify';
import fastify4 from 'fastify4';
import formbody7 from 'formbody7';

/** One major version of Fastify, with the @fastify/formbody major that supports it. */
export interface Version {
  fastify: typeof fastify5;
  formbody: typeof formbody8;
}

/** Both major versions of Fastify, by name. */
export const VERSIONS: [string, Version][] = [
  ['Fastify 5', { fastify: fastify5, formbody: formbody8 }],
  ['Fastify 4', { fastify: fastify4, formbody: formbody7 }],
];

/** Registers content-type parsers on the app, before the webhook's route, as an app would. */
type Parsers = (app: FastifyInstance, version: Version) => Promise<unknown>;

const keep = (_request: unknown, body: unknown, done: (error: Error | null, body?: unknown) => void) =>
  done(null, body);

/**
 * The content-type parsers the plugin must work behind, by name: Fastify's own JSON parser is there in every
 * app; the others are added at app level before the plugin is registered, each limited to `limit` bytes.
 */
export const PARSERS: [string, (limit?: number) => Parsers][] = [
  ["Fastify's own JSON parser", () => async () => {}],
  [
    '@fastify/formbody',
    (limit) =>
      async (app, { formbody }) => {
        await app.register(formbody, { bodyLimit: limit });
      },
  ],
  [
    'a catch-all string parser',
    (limit) => async (app) => app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: limit }, keep),
  ],
  [
    'a catch-all buffer parser',
    (limit) => async (app) => app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, keep),
  ],
  [
    '@fastify/formbody and a JSON parser that refuses every body',
    (limit) =>
      async (app, { formbody }) => {
        await app.register(formbody, { bodyLimit: limit });
        app.removeContentTypeParser('application/json');
        app.addContentTypeParser('application/json', (_request, _payload, done) =>
          done(Object.assign(new Error('refused by the app'), { statusCode: 422 })),
        );
      },
  ],
];
