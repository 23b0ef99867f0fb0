import { bodyParser } from '@koa/bodyparser';
import Koa3, { type Middleware } from 'koa';
import { koaBody } from 'koa-body';
import Koa2 from 'koa2';

// The parsers' own types still name @types/koa 2; at runtime they are Koa middleware for both versions.
export const koa = (middleware: unknown): Middleware => middleware as Middleware;

/** The body parsers the adapter must work behind, by name, each limited to `limit` bytes when given. */
export const PARSERS: [string, (limit?: number) => Middleware[]][] = [
  ['no body parser', () => []],
  ['@koa/bodyparser', (limit) => [koa(bodyParser({ formLimit: limit, jsonLimit: limit }))]],
  [
    '@koa/bodyparser for json, form and text',
    (limit) => [
      koa(bodyParser({ enableTypes: ['json', 'form', 'text'], formLimit: limit, jsonLimit: limit })),
    ],
  ],
  ['koa-body', (limit) => [koa(koaBody({ formLimit: limit, jsonLimit: limit }))]],
  [
    'koa-body with includeUnparsed',
    (limit) => [koa(koaBody({ includeUnparsed: true, formLimit: limit, jsonLimit: limit }))],
  ],
];

/** Both major versions of Koa, by name. */
export const VERSIONS: [string, typeof Koa3][] = [
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
];
