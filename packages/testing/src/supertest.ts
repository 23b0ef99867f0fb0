import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ERROR_STATUS, type WebhookErrorCode, type WebhookOutcome } from '@payhook/core';
import { type SignedWebhook, type SignWebhookOptions, signWebhook } from './sign.js';

/**
 * A `node:http` request listener; an Express app is one.
 *
 * @example
 * const listener: RequestListener = createNodeListener(webhook);
 */
export type RequestListener = (request: IncomingMessage, response: ServerResponse) => unknown;

/**
 * A Fetch handler: a function from a `Request` to a `Response` (Hono's `app.fetch`, a Next.js route handler,
 * Bun, Deno and Workers handlers).
 *
 * @example
 * const handler: FetchHandler = (request) => app.fetch(request);
 */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/**
 * What `postWebhook` can post to: an Express app or any `(req, res)` request listener, a Koa app (its
 * `callback()` is used), a Fastify app (`ready()` is awaited, then its `server` is used), a NestJS app (its
 * `getHttpServer()`, after `init()`, which Nest runs once), a `node:http` server (started on an ephemeral port if it
 * is not listening), a Fetch handler (a one-argument function) or an object with a `fetch` method (a Hono app,
 * `{ fetch: POST }` for a Next.js route handler), or the base URL of a live server.
 *
 * @example
 * const targets: WebhookTarget[] = [expressApp, koaApp, fastifyApp, nestApp, honoApp, (req: Request) => POST(req), 'http://127.0.0.1:3000'];
 */
export type WebhookTarget =
  | RequestListener
  | FetchHandler
  | { callback(): RequestListener }
  | { fetch: FetchHandler }
  | { server: Server; ready(): PromiseLike<unknown> }
  | { getHttpServer(): unknown; init(): PromiseLike<unknown> }
  | Server
  | string;

/**
 * Where and how `postWebhook` delivers.
 *
 * @example
 * await postWebhook(app, fakePurchase(), { secret, path: '/webhooks', variant: 'json' });
 */
export interface PostWebhookOptions extends SignWebhookOptions {
  /** The project secret the receiver is configured with. */
  secret: string;
  /**
   * The path the webhook route is mounted on.
   * @default '/webhooks'
   */
  path?: string;
  /** Extra request headers (e.g. `x-forwarded-for` for `allowedSenders`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * The receiver's answer, with assertions that throw a plain `Error` describing what came back.
 *
 * @example
 * const res = await postWebhook(app, fakePurchase(), { secret });
 * res.expectHandled();
 * res.outcome; // 'handled'
 */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
  /** The JSON body, or `undefined` when the body is not JSON. */
  readonly body: unknown;
  /** `outcome` of a payhook answer (`handled`, `queued`, `duplicate`, `stale`, `ignored`), when present. */
  readonly outcome: WebhookOutcome | undefined;
  /** `error.code` of a payhook refusal, when present. */
  readonly errorCode: string | undefined;
  /** What was sent. */
  readonly signed: SignedWebhook;
  /** Asserts 200 with outcome `handled`. */
  expectHandled(): WebhookResponse;
  /** Asserts 200 with outcome `duplicate`. */
  expectDuplicate(): WebhookResponse;
  /** Asserts 200 with the given outcome (`stale`, `ignored`, …). */
  expectOutcome(outcome: Exclude<WebhookOutcome, 'refused'>): WebhookResponse;
  /** Asserts the status core maps `code` to (401 for `signature.invalid`, …) and that `error.code` is `code`. */
  expectRefused(code: WebhookErrorCode): WebhookResponse;
}

type Supertest = typeof import('supertest');

let supertest: Promise<Supertest> | undefined;

/**
 * supertest is an optional peer: loaded on the first `postWebhook`, so importing `@payhook/testing` costs nothing
 * for the fake service, the fixtures or `signWebhook`, and a missing install is named when a helper needs it.
 */
function loadSupertest(): Promise<Supertest> {
  supertest ??= import('supertest').then(
    (module) => ((module as { default?: Supertest }).default ?? module) as Supertest,
    (error: unknown) => {
      supertest = undefined;
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
      if (!missing || !/['"]supertest['"]/.test(String(message))) throw error;
      throw new Error(
        '[@payhook/testing] postWebhook needs supertest, an optional peer dependency: npm install --save-dev supertest',
        { cause: error },
      );
    },
  );
  return supertest;
}

const TARGETS =
  'an Express or Koa app, a Fastify app, a NestJS app, a node:http server, a (req, res) listener, a Fetch handler or a URL';

/** The listener or server inside `target`, with the framework made ready first (Fastify, NestJS). */
async function toSupertestTarget(target: WebhookTarget): Promise<RequestListener | Server | string> {
  if (typeof target === 'string' || typeof target === 'function') return target as RequestListener | string;
  if ('callback' in target && typeof target.callback === 'function') return target.callback();
  if ('getHttpServer' in target && typeof target.getHttpServer === 'function') {
    if (typeof target.init === 'function') await target.init();
    // Nest on Fastify: Fastify's own ready() too, or its routes are not there yet.
    const instance = (target as { getHttpAdapter?: () => { getInstance?: () => unknown } })
      .getHttpAdapter?.()
      .getInstance?.() as { ready?: () => PromiseLike<unknown>; server?: unknown } | undefined;
    if (typeof instance?.ready === 'function' && instance.server !== undefined) await instance.ready();
    return target.getHttpServer() as Server;
  }
  if ('server' in target && typeof target.ready === 'function') {
    await target.ready();
    return target.server;
  }
  if (typeof (target as { address?: unknown }).address !== 'function') {
    throw new TypeError(`[@payhook/testing] postWebhook cannot post to this object: pass ${TARGETS}.`);
  }
  return target as Server;
}

function isSigned(value: object): value is SignedWebhook {
  return 'data' in value && 'signature' in value && 'body' in value && 'headers' in value;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * The Fetch handler inside `target`, if it is one: an object with a `fetch` method (Hono, `{ fetch: POST }`),
 * or a function of one parameter. Request listeners take two (`req`, `res`), Express apps three; a Fetch
 * handler of two parameters (`(request, context)`) goes in an object: `{ fetch: handler }`.
 */
function fetchHandlerOf(target: WebhookTarget): FetchHandler | undefined {
  if (typeof target === 'function') {
    const express = typeof (target as { handle?: unknown }).handle === 'function';
    return !express && target.length < 2 ? (target as FetchHandler) : undefined;
  }
  if (typeof target === 'object' && 'fetch' in target && typeof target.fetch === 'function') {
    return (request) => target.fetch(request);
  }
  return undefined;
}

async function postToFetchHandler(
  handler: FetchHandler,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<RawAnswer> {
  const response = await handler(
    new Request(new URL(path, 'http://127.0.0.1'), { method: 'POST', headers, body }),
  );
  if (!(response instanceof Response)) {
    throw new TypeError(
      '[@payhook/testing] the Fetch handler did not return a Response: pass an (req, res) listener or an app.',
    );
  }
  const answerHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    answerHeaders[name] = value;
  });
  return { status: response.status, headers: answerHeaders, text: await response.text() };
}

async function postWithSupertest(
  target: WebhookTarget,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<RawAnswer> {
  const request = await loadSupertest();
  const res = await request(await toSupertestTarget(target))
    .post(path)
    .set(headers)
    .send(body);
  return {
    status: res.status,
    headers: res.headers as Record<string, string | string[] | undefined>,
    text: res.text ?? '',
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function answer(status: number, text: string): string {
  const shown = text.length > 500 ? `${text.slice(0, 500)}…` : text;
  return `${status} ${shown === '' ? '(empty body)' : shown}`;
}

/**
 * Signs a notification and POSTs it in-process: with supertest to a Node app or server (supertest is an optional
 * peer: `npm install --save-dev supertest`), by calling a Fetch handler with a `Request` otherwise. Returns the answer with `expectHandled()`,
 * `expectDuplicate()` and `expectRefused(code)`, which throw plain `Error`s (no test-runner globals: vitest,
 * jest and node:test alike). A `SignedWebhook` from `signWebhook` is posted as it is.
 *
 * @example
 * const purchase = fakePurchase();
 * (await postWebhook(app, purchase, { secret: 'test-secret' })).expectHandled();
 * (await postWebhook(app, purchase, { secret: 'test-secret' })).expectDuplicate();
 * (await postWebhook(app, purchase, { secret: 'test-secret', variant: 'tampered' })).expectRefused('signature.invalid');
 */
export async function postWebhook(
  target: WebhookTarget,
  notification: object,
  options: PostWebhookOptions,
): Promise<WebhookResponse> {
  const signed = isSigned(notification) ? notification : signWebhook(notification, options.secret, options);
  const path = options.path ?? '/webhooks';
  const headers = { ...signed.headers, ...options.headers };
  const fetchHandler = fetchHandlerOf(target);
  const res = fetchHandler
    ? await postToFetchHandler(fetchHandler, path, headers, signed.body)
    : await postWithSupertest(target, path, headers, signed.body);
  const { text } = res;
  const body = parseJson(text);
  const json = (body ?? {}) as { outcome?: WebhookOutcome; error?: { code?: string } };
  const outcome = typeof json.outcome === 'string' ? json.outcome : undefined;
  const errorCode = typeof json.error?.code === 'string' ? json.error.code : undefined;
  const where = `POST ${path} (${signed.variant})`;

  const response: WebhookResponse = {
    status: res.status,
    headers: res.headers,
    text,
    body,
    outcome,
    errorCode,
    signed,
    expectHandled: () => response.expectOutcome('handled'),
    expectDuplicate: () => response.expectOutcome('duplicate'),
    expectOutcome(expected) {
      if (res.status !== 200 || outcome !== expected) {
        throw new Error(
          `[@payhook/testing] ${where}: expected 200 with outcome "${expected}", got ${answer(res.status, text)}`,
        );
      }
      return response;
    },
    expectRefused(code) {
      const status = ERROR_STATUS[code];
      if (status === undefined)
        throw new TypeError(`[@payhook/testing] unknown error code ${JSON.stringify(code)}.`);
      if (res.status !== status || errorCode !== code) {
        throw new Error(
          `[@payhook/testing] ${where}: expected ${status} with error code "${code}", got ${answer(res.status, text)}`,
        );
      }
      return response;
    },
  };
  return response;
}
