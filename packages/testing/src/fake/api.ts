import { renderMessagePage } from '../pages/layout.js';
import { renderReceiptPage } from '../pages/receipt.js';
import { authenticate } from './auth.js';
import { checkoutPage, html } from './checkout-http.js';
import { credentialsError, FakeServiceError } from './errors.js';
import type { ApiRequest, ApiResponse } from './exchange.js';
import type { OperationRoute } from './operation-requests.js';
import type { FakeProject } from './projects.js';
import type { FakeService } from './service.js';

const CHECKOUT = /^\/api\/v1\/checkout\/([^/]+)\/(form|3ds)$/;
const RECEIPT = /^\/public\/receipt\/([^/]+)$/;
const RESEND = /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)\/([^/]+)$/;
const ORDER = /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)$/;
const OPERATION = /^\/api\/v1\/(capture|void|refund|split\/capture)$/;

/** What the fake answers, named in the 404 of any other route. */
const ROUTES = [
  'POST /api/v1/payment',
  'POST /api/v1/split/purchase',
  'POST /api/v1/capture',
  'POST /api/v1/void',
  'POST /api/v1/refund',
  'POST /api/v1/split/capture',
  'GET /api/v1/pos/{pos_id}/orders/{order_id}',
  'GET /api/v1/pos/{pos_id}/orders/{order_id}/{operation}?callback=true',
  'GET|POST /api/v1/checkout/{id}/form and /3ds',
  'GET /public/receipt/{token}',
];

/** The 404 of a route the fake does not have: which routes it has (and where the admin ones are). */
function noRoute(method: string, path: string): FakeServiceError {
  return new FakeServiceError(
    'N-404',
    404,
    `Not found: the fake payment service has no route ${method} ${path.slice(0, 200)}. It answers ${ROUTES.join(', ')}; 'payhook serve' also has the admin routes under /__payhook/.`,
  );
}

export function header(request: ApiRequest, name: string): string | undefined {
  const value = request.headers[name] ?? request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : (value as string | undefined);
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): ApiResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(value),
  };
}

export function failure(error: unknown): ApiResponse {
  if (error instanceof FakeServiceError) return json(error.status, error.toBody());
  throw error;
}

/**
 * The JSON object of a request body. `loose` also reads one declared `application/x-www-form-urlencoded`, as one
 * public plugin sends its JSON (the spec says `application/json`: refused when strict).
 */
export function readJson(request: ApiRequest, loose = false): Record<string, unknown> {
  const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const json =
    type === 'application/x-www-form-urlencoded' && loose && request.body.trimStart().startsWith('{');
  if (type !== 'application/json' && !json) {
    throw new FakeServiceError('R-415', 415, 'Content-Type must be application/json.');
  }
  if (request.body.trim() === '') throw new FakeServiceError('R-400', 400, 'A JSON body is required.');
  let value: unknown;
  try {
    value = JSON.parse(request.body);
  } catch {
    throw new FakeServiceError('R-400', 400, 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FakeServiceError('R-400', 400, 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

function createPayment(
  fake: FakeService,
  request: ApiRequest,
  project: FakeProject,
  split: boolean,
): ApiResponse {
  const created = fake.createPayment(readJson(request, !fake.strict), { split, posId: project.posId });
  if (created.mode === 'hosted') return { status: 303, headers: { location: created.location }, body: '' };
  return json(200, created.record);
}

/** The API's routes for an authenticated project; `undefined` for a route it does not have. */
function apiRoute(
  fake: FakeService,
  request: ApiRequest,
  project: FakeProject,
  method: string,
  url: URL,
): ApiResponse | undefined {
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '/api/v1/payment' && method === 'POST') return createPayment(fake, request, project, false);
  if (path === '/api/v1/split/purchase' && method === 'POST')
    return createPayment(fake, request, project, true);
  const operation = OPERATION.exec(path);
  if (operation && method === 'POST') {
    const route = operation[1] as OperationRoute;
    return json(200, fake.operationRequest(route, readJson(request, !fake.strict), project.posId));
  }
  const order = ORDER.exec(path);
  if (order && method === 'GET') {
    if (decodeURIComponent(order[1]!) !== project.posId) throw credentialsError();
    return json(200, fake.orderOperations(decodeURIComponent(order[2]!), project.posId));
  }
  const resend = RESEND.exec(path);
  if (resend && method === 'GET') {
    if (decodeURIComponent(resend[1]!) !== project.posId) throw credentialsError();
    return json(200, resendAnswer(fake, project, resend, url.searchParams));
  }
  return undefined;
}

/**
 * A re-send (4.3, 4.4): `callback=true`, or `callback=1` as PHP's HTTP clients write true (refused when strict);
 * an empty `transactionId` (a community SDK's) taken as none.
 */
function resendAnswer(
  fake: FakeService,
  project: FakeProject,
  resend: RegExpExecArray,
  query: URLSearchParams,
) {
  const callback = query.get('callback');
  if (callback !== 'true' && !(callback === '1' && !fake.strict)) {
    throw new FakeServiceError('R-400', 400, 'callback=true is required.');
  }
  const transactionId = query.get('transactionId') || undefined;
  const orderId = decodeURIComponent(resend[2]!);
  return fake.resend(project.posId, orderId, decodeURIComponent(resend[3]!), transactionId);
}

function receiptPage(fake: FakeService, method: string, token: string): ApiResponse {
  if (method !== 'GET') {
    return json(405, { message: 'Method not allowed', args: { code: 'R-405' } }, { allow: 'GET' });
  }
  const record = fake.receipt(token);
  if (!record) return html(404, renderMessagePage('Not found', 'There is no such receipt.'));
  return html(200, renderReceiptPage(record));
}

/**
 * Answers one request against the fake service: the API of spec part 4 (credentials checked on every call) and
 * the checkout, 3DS and receipt pages the customer's browser opens. Both transports (nock and the HTTP server) call it.
 *
 * @example
 * const answer = handleApiRequest(fake, { method: 'POST', url: '/api/v1/payment', headers, body });
 */
export function handleApiRequest(fake: FakeService, request: ApiRequest): ApiResponse {
  const url = new URL(request.url, 'http://fake.invalid');
  const path = url.pathname.replace(/\/+$/, '');
  const method = request.method.toUpperCase();
  try {
    const checkout = CHECKOUT.exec(path);
    if (checkout) {
      if (method !== 'GET' && method !== 'POST')
        return json(405, { message: 'Method not allowed', args: { code: 'R-405' } }, { allow: 'GET, POST' });
      return checkoutPage(fake, method, url.searchParams, request.body, decodeURIComponent(checkout[1]!));
    }
    const receipt = RECEIPT.exec(path);
    if (receipt) return receiptPage(fake, method, decodeURIComponent(receipt[1]!));
    if (!path.startsWith('/api/v1/')) throw noRoute(method, path);
    const project = authenticate(fake, {
      method,
      path: `${url.pathname}${url.search}`,
      body: request.body,
      auth: header(request, 'x-api-auth') ?? '',
      endpointsKey: header(request, 'x-api-key'),
      keyParameter: url.searchParams.get('key') ?? undefined,
    });
    const answer = apiRoute(fake, request, project, method, url);
    if (answer === undefined) throw noRoute(method, path);
    return answer;
  } catch (error) {
    return failure(error);
  }
}
