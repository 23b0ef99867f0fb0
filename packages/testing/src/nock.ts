import nock from 'nock';
import { handleApiRequest } from './fake/api.js';
import type { FakeProject } from './fake/projects.js';
import { FakeService } from './fake/service.js';
import type { FakeServiceOptions } from './fake/types.js';

/**
 * One request the interceptors answered.
 *
 * @example
 * expect(api.calls.map((c: ApiCall) => c.status)).toEqual([200, 303]);
 */
export interface ApiCall {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly status: number;
  /** The error code of a refusal's body (`S-404`, `V-400`), when it has one. */
  readonly code?: string;
}

/**
 * Which refusals (4xx answers) a test expects: `true` for any, or a list of statuses (`[401, 409]`).
 *
 * @example
 * api.done({ expectRefusals: [401] });
 */
export type ExpectedRefusals = boolean | readonly number[];

/**
 * What `isDone()` and `done()` let pass, beyond the options given to `mockPaymentApi`.
 *
 * @example
 * api.done({ expectRefusals: [400], expectFailedDeliveries: true });
 */
export interface DoneOptions {
  /** Webhooks may have failed: undelivered ones are not listed. */
  expectFailedDeliveries?: boolean;
  /** Refusals (4xx answers) the test provoked on purpose. */
  expectRefusals?: ExpectedRefusals;
}

/**
 * Options of `mockPaymentApi`: the engine's options plus the intercepted `baseUrl`.
 *
 * @example
 * mockPaymentApi({ baseUrl: 'https://pay.test', secret: 'whsec', seed: 1, allowNetConnect: /^127\.0\.0\.1/ });
 */
export interface MockPaymentApiOptions extends FakeServiceOptions {
  /** The `{base_url}` to intercept, e.g. `https://api.payments.example`. */
  baseUrl: string;
  /** An engine to put behind the interceptors instead of a new one (its `baseUrl` should match). */
  fake?: FakeService;
  /**
   * Hosts still reached over the network (webhooks go to the merchant's local server).
   * @default 127.0.0.1, localhost and [::1], any port
   */
  allowNetConnect?: string | RegExp | ((host: string) => boolean);
  /**
   * The test expects webhooks to fail (a receiver that is down or answers 5xx): `done()` then does not list
   * undelivered webhooks.
   * @default false
   */
  expectFailedDeliveries?: boolean;
  /**
   * Refusals the test provokes on purpose (`true`, or a list of statuses): `done()` then does not list those 4xx
   * answers. Any other 4xx makes `done()` throw.
   * @default false
   */
  expectRefusals?: ExpectedRefusals;
}

/**
 * The installed interceptors, the engine behind them, and nock-style assertions.
 *
 * @example
 * const api: PaymentApiMock = mockPaymentApi({ baseUrl, secret });
 * afterEach(() => api.restore());
 */
export interface PaymentApiMock {
  readonly fake: FakeService;
  /** The first project: its `posId`, `apiKey`, `endpointsKey`, `secret`. */
  readonly project: FakeProject;
  readonly baseUrl: string;
  /** Every request answered, in order. */
  readonly calls: readonly ApiCall[];
  /**
   * Headers for an API call of `project` (or the first project): `X-API-AUTH`, `X-API-KEY`, JSON type. Without
   * `signature`, `X-API-AUTH` is `<WORD> <API_KEY>:<API_SECRET>` (valid for any request); with it,
   * `<WORD>-HMAC-SHA256 <API_KEY>:<signature>`. WORD is the fake's `authScheme`, else `SVC`.
   */
  headers(project?: FakeProject, signature?: string): Record<string, string>;
  /**
   * True when at least one call was made, every call was routed and answered below 400 (or with a refusal the test
   * expects: `expectRefusals`), every webhook sent
   * so far was acknowledged (unless failed deliveries are expected), and none sent for the first time was
   * answered `duplicate` (a store that remembers an earlier run's ids).
   */
  isDone(options?: DoneOptions): boolean;
  /**
   * Throws (like nock's `scope.done()`) unless `isDone()`, listing the calls that went wrong (method, path, status,
   * the body's code) and each webhook
   * not delivered with its cause (`fetch failed (connect ECONNREFUSED 127.0.0.1:…)`, `answered 500`), and each
   * first delivery answered `duplicate` with the cause and the fix.
   */
  done(options?: DoneOptions): void;
  /** Removes these interceptors and allows the network again. */
  restore(): void;
}

/** A 5xx is never expected; a 4xx when the test said so. */
function expected(status: number, refusals: ExpectedRefusals | undefined): boolean {
  if (status >= 500 || refusals === undefined || refusals === false) return false;
  return refusals === true || refusals.includes(status);
}

/** `args.code` of the fake's JSON error body. */
function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { args?: { code?: unknown } }).args?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What the reply function needs of an intercepted request, from nock 14 or nock 15. */
interface Intercepted {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** nock 15 hands reply functions and events a Fetch `Request`; nock 14 a `ClientRequest` and the path. */
function isFetchRequest(value: unknown): value is Request {
  return typeof value === 'object' && value !== null && typeof (value as Request).clone === 'function';
}

function plainHeaders(headers: unknown): Record<string, string> {
  const plain: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      plain[name] = value;
    });
    return plain;
  }
  for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
    if (value !== undefined)
      plain[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return plain;
}

/**
 * Installs nock interceptors (nock 14 on Node 20, nock 15 on Node 22 and later; both `http` and native `fetch`
 * clients) answering the payment service's API at
 * `baseUrl` from a `FakeService`: payments, split payments, subscriptions, webhook re-sends, capture, void,
 * refund and the order's status, and the checkout and 3DS pages. The network stays closed except to the local hosts, where the engine's webhooks go.
 *
 * @example
 * const api = mockPaymentApi({ baseUrl: 'https://pay.test', secret: 'whsec', now: '2026-01-01T10:00:00Z' });
 * const res = await fetch('https://pay.test/api/v1/payment', { method: 'POST', headers: api.headers(), body });
 * await api.fake.idle();
 * api.done();
 * api.restore();
 */
export function mockPaymentApi(options: MockPaymentApiOptions): PaymentApiMock {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fake = options.fake ?? new FakeService({ ...options, baseUrl });
  const seen: Interception = {
    fake,
    origin: new URL(baseUrl).origin,
    prefix: new URL(baseUrl).pathname.replace(/\/+$/, ''),
    calls: [],
    unmatched: [],
    raw: new WeakMap(),
  };
  warnPaddedSecrets(fake.projects);
  const scope = nock(seen.origin).persist();
  scope.on('request', keepRawRequest(seen.raw));
  const interceptors = METHODS.map((method) => answerFromFake(scope, method, seen));
  const onNoMatch = recordUnmatched(seen);
  nock.emitter.on('no match', onNoMatch);
  nock.disableNetConnect();
  nock.enableNetConnect(options.allowNetConnect ?? ((host: string) => LOCAL_HOST.test(host)));
  const problems = (check: DoneOptions = {}): string[] => problemsOf(seen, check, options);

  return {
    fake,
    get project() {
      return fake.project;
    },
    baseUrl,
    calls: seen.calls,
    headers: (project = fake.project, signature?: string) => apiHeaders(fake, project, signature),
    isDone: (check) => problems(check).length === 0,
    done(check) {
      const list = problems(check);
      if (list.length > 0) throw new Error(`[@payhook/testing] fake payment API: ${list.join('; ')}.`);
    },
    restore() {
      for (const interceptor of interceptors) nock.removeInterceptor(interceptor);
      scope.removeAllListeners('request');
      nock.emitter.removeListener('no match', onNoMatch);
      nock.enableNetConnect();
    },
  };
}

/** What the interceptors of one `mockPaymentApi` share: the engine, where it answers, and what they saw. */
interface Interception {
  readonly fake: FakeService;
  readonly origin: string;
  /** The path of `baseUrl`, stripped from each request's path before the engine routes it. */
  readonly prefix: string;
  readonly calls: ApiCall[];
  /** Requests to the origin that no interceptor matched. */
  readonly unmatched: string[];
  /**
   * The raw body, as the 'request' event gives it (nock 14 would JSON.parse a JSON body before the reply
   * function, failing on a malformed one; nock 15 hands a Fetch Request whose headers cannot be replaced).
   */
  readonly raw: WeakMap<object, Intercepted>;
}

/** The 'request' listener that keeps each request's path, headers and raw body for the reply function. */
function keepRawRequest(
  raw: WeakMap<object, Intercepted>,
): (req: unknown, interceptor: unknown, body: string) => void {
  return (req, _interceptor, body) => {
    if (isFetchRequest(req)) {
      const url = new URL(req.url);
      raw.set(req, { path: `${url.pathname}${url.search}`, headers: plainHeaders(req.headers), body });
      return;
    }
    // nock 14: a ClientRequest-like object whose content type is hidden from nock's JSON parsing.
    const request = req as { path: string; headers: Record<string, unknown> };
    raw.set(req as object, { path: request.path, headers: plainHeaders(request.headers), body });
    request.headers = { ...request.headers, 'content-type': 'application/octet-stream' };
  };
}

/** An interceptor of `method` under the prefix that the engine answers, each call recorded. */
function answerFromFake(scope: nock.Scope, method: string, seen: Interception): nock.Interceptor {
  const { fake, prefix, raw, calls } = seen;
  const interceptor = scope.intercept((path) => path.startsWith(prefix), method);
  interceptor.reply(function (this: { req?: object }, first: unknown) {
    const req = isFetchRequest(first) ? first : this.req;
    const kept = (req && raw.get(req)) ?? { path: String(first), headers: {}, body: '' };
    const answer = handleApiRequest(fake, {
      method,
      url: kept.path.slice(prefix.length) || '/',
      headers: kept.headers,
      body: kept.body,
    });
    const code = answer.status >= 400 ? errorCode(answer.body) : undefined;
    calls.push({ method, path: kept.path, status: answer.status, ...(code ? { code } : {}) });
    return [answer.status, answer.body, answer.headers];
  } as unknown as (uri: string, body: unknown) => [number, string, Record<string, string>]);
  return interceptor;
}

/** The 'no match' listener: notes a request to the intercepted origin that no interceptor took. */
function recordUnmatched(seen: Interception): (req: NoMatch) => void {
  return (req) => {
    const url = typeof req.url === 'string' && /^https?:/.test(req.url) ? new URL(req.url) : undefined;
    const host = url?.host ?? req.hostname ?? req.host ?? '';
    const path = url ? `${url.pathname}${url.search}` : (req.path ?? '');
    if (host !== '' && seen.origin.includes(host)) seen.unmatched.push(`${req.method ?? '?'} ${path}`);
  };
}

/** nock 14 passes request options, nock 15 a Fetch Request. */
interface NoMatch {
  url?: string;
  hostname?: string;
  host?: string;
  method?: string;
  path?: string;
}

/** What `done()` lists: no call at all, unexpected refusals, unmatched requests, undelivered webhooks, duplicates. */
function problemsOf(seen: Interception, check: DoneOptions, options: MockPaymentApiOptions): string[] {
  const { calls, unmatched, fake } = seen;
  return [
    ...(calls.length === 0 ? ['no request reached the fake payment API'] : []),
    ...calls
      .filter((c) => c.status >= 400 && !expected(c.status, check.expectRefusals ?? options.expectRefusals))
      .map((c) => `${c.method} ${c.path} answered ${c.status}${c.code ? ` ${c.code}` : ''}`),
    ...unmatched.map((u) => `${u} was not intercepted`),
    ...((check.expectFailedDeliveries ?? options.expectFailedDeliveries) ? [] : fake.outbox.undelivered()),
    ...fake.outbox.unexpectedDuplicates(),
  ];
}

/**
 * Stripe's warning for a secret copied with its newline: the fake uses it as given, so its webhooks verify only
 * with the padded secret, and `api.headers()` (`<WORD> <API_KEY>:<API_SECRET>`) cannot carry it in a header.
 */
function warnPaddedSecrets(projects: readonly FakeProject[]): void {
  const padded = projects.some((p) => p.secret !== p.secret.trim() || p.apiSecret !== p.apiSecret.trim());
  if (!padded) return;
  console.warn(
    "[@payhook/testing] mockPaymentApi: a project's secret has leading or trailing whitespace; it is used as given, so webhooks are signed with it and api.headers() cannot send it (a header value holds no newline). Trim it if it was copied with a newline.",
  );
}

/** `PaymentApiMock.headers`: a plain `X-API-AUTH` without `signature`, an HMAC one with it. */
function apiHeaders(
  fake: FakeService,
  project: FakeProject,
  signature: string | undefined,
): Record<string, string> {
  const word = fake.authScheme ?? 'SVC';
  return {
    'content-type': 'application/json',
    'x-api-auth':
      signature === undefined
        ? `${word} ${project.apiKey}:${project.apiSecret}`
        : `${word}-HMAC-SHA256 ${project.apiKey}:${signature}`,
    'x-api-key': project.endpointsKey,
  };
}
