import type { ClientRequest } from 'node:http';
import nock from 'nock';
import { handleApiRequest } from './fake/api.js';
import type { FakeProject } from './fake/projects.js';
import { FakeService, type FakeServiceOptions } from './fake-service.js';

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
  /** Headers for an API call of `project` (or the first project): `X-API-AUTH`, `X-API-KEY`, JSON type. */
  headers(project?: FakeProject, signature?: string): Record<string, string>;
  /** True when at least one call was made and every call was routed and answered below 500. */
  isDone(): boolean;
  /** Throws (like nock's `scope.done()`) unless `isDone()`, listing the calls that went wrong. */
  done(): void;
  /** Removes these interceptors and allows the network again. */
  restore(): void;
}

const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Installs nock 14 interceptors (both `http` and native `fetch` clients) answering the payment service's API at
 * `baseUrl` from a `FakeService`: payments, split payments, subscriptions, webhook re-sends, and the checkout
 * and 3DS pages. The network stays closed except to the local hosts, where the engine's webhooks go.
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
  const origin = new URL(baseUrl).origin;
  const prefix = new URL(baseUrl).pathname.replace(/\/+$/, '');
  const calls: ApiCall[] = [];
  const unmatched: string[] = [];
  const raw = new WeakMap<object, { body: string; contentType: string | undefined }>();

  const scope = nock(origin).persist();
  scope.on(
    'request',
    (req: ClientRequest & { headers: Record<string, string> }, _i: unknown, body: string) => {
      // nock would JSON.parse a JSON body before the reply function (and fail on a malformed one): keep it raw.
      raw.set(req, { body, contentType: req.headers['content-type'] });
      req.headers = { ...req.headers, 'content-type': 'application/octet-stream' };
    },
  );
  const interceptors = METHODS.map((method) => {
    const interceptor = scope.intercept((path) => path.startsWith(prefix), method);
    interceptor.reply(function (path) {
      const kept = raw.get(this.req) ?? { body: '', contentType: undefined };
      const headers: Record<string, string> = { ...this.req.headers };
      if (kept.contentType === undefined) delete headers['content-type'];
      else headers['content-type'] = kept.contentType;
      const answer = handleApiRequest(fake, {
        method,
        url: path.slice(prefix.length) || '/',
        headers,
        body: kept.body,
      });
      calls.push({ method, path, status: answer.status });
      return [answer.status, answer.body, answer.headers];
    });
    return interceptor;
  });
  const onNoMatch = (req: { hostname?: string; host?: string; method?: string; path?: string }) => {
    const host = req.hostname ?? req.host ?? '';
    if (origin.includes(host)) unmatched.push(`${req.method ?? '?'} ${req.path ?? ''}`);
  };
  nock.emitter.on('no match', onNoMatch);
  nock.disableNetConnect();
  nock.enableNetConnect(options.allowNetConnect ?? ((host: string) => LOCAL_HOST.test(host)));

  const problems = (): string[] => [
    ...(calls.length === 0 ? ['no request reached the fake payment API'] : []),
    ...calls
      .filter((c) => c.status >= 500 || c.status === 404)
      .map((c) => `${c.method} ${c.path} answered ${c.status}`),
    ...unmatched.map((u) => `${u} was not intercepted`),
  ];

  return {
    fake,
    get project() {
      return fake.project;
    },
    baseUrl,
    calls,
    headers(project = fake.project, signature = 'test-signature') {
      return {
        'content-type': 'application/json',
        'x-api-auth': `SVC-HMAC-SHA256 ${project.apiKey}:${signature}`,
        'x-api-key': project.endpointsKey,
      };
    },
    isDone: () => problems().length === 0,
    done() {
      const list = problems();
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
