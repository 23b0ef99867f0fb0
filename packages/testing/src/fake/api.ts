import { renderMessagePage } from '../pages/layout.js';
import { renderReceiptPage } from '../pages/receipt.js';
import { authenticate } from './auth.js';
import { checkoutPage, html } from './checkout-http.js';
import { credentialsError, FakeServiceError } from './errors.js';
import type { ApiRequest, ApiResponse } from './exchange.js';
import type { FakeProject } from './projects.js';
import type { FakeService } from './service.js';

const CHECKOUT = /^\/api\/v1\/checkout\/([^/]+)\/(form|3ds)$/;
const RECEIPT = /^\/public\/receipt\/([^/]+)$/;
const RESEND = /^\/api\/v1\/pos\/([^/]+)\/orders\/([^/]+)\/([^/]+)$/;

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

export function readJson(request: ApiRequest): Record<string, unknown> {
  const type = (header(request, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
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
  const created = fake.createPayment(readJson(request), { split, posId: project.posId });
  if (created.mode === 'hosted') return { status: 303, headers: { location: created.location }, body: '' };
  return json(200, created.record);
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
    if (!path.startsWith('/api/v1/')) {
      throw new FakeServiceError('N-404', 404, 'Not found.');
    }
    const project = authenticate(fake, {
      method,
      path: `${url.pathname}${url.search}`,
      body: request.body,
      auth: header(request, 'x-api-auth') ?? '',
      endpointsKey: header(request, 'x-api-key') ?? '',
    });
    if (path === '/api/v1/payment' && method === 'POST') return createPayment(fake, request, project, false);
    if (path === '/api/v1/split/purchase' && method === 'POST')
      return createPayment(fake, request, project, true);
    const resend = RESEND.exec(path);
    if (resend && method === 'GET') {
      if (decodeURIComponent(resend[1]!) !== project.posId) throw credentialsError();
      if (url.searchParams.get('callback') !== 'true') {
        throw new FakeServiceError('R-400', 400, 'callback=true is required.');
      }
      const transactionId = url.searchParams.get('transactionId') ?? undefined;
      return json(
        200,
        fake.resend(
          project.posId,
          decodeURIComponent(resend[2]!),
          decodeURIComponent(resend[3]!),
          transactionId,
        ),
      );
    }
    throw new FakeServiceError('N-404', 404, 'Not found.');
  } catch (error) {
    return failure(error);
  }
}
