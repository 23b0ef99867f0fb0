import type { FakeService } from '../fake-service.js';
import { type ApiRequest, type ApiResponse, failure, header, json, readJson } from './api.js';
import type { Duration } from './calendar.js';
import { FakeServiceError } from './errors.js';

/** Where the admin routes of `startFakeServer` and `payhook serve` live: not part of the service's API. */
export const ADMIN_PREFIX = '/__payhook';

const OPERATION = /^\/payments\/([^/]+)\/(capture|void|refund)$/;
const CANCEL = /^\/subscriptions\/([^/]+)\/cancel$/;

function amountOf(body: Record<string, unknown>): number | undefined {
  const { amount } = body;
  if (amount === undefined) return undefined;
  if (typeof amount !== 'number') throw new FakeServiceError('R-400', 400, 'amount must be a number.');
  return amount;
}

function optionalJson(request: ApiRequest): Record<string, unknown> {
  return request.body.trim() === '' ? {} : readJson(request);
}

async function moveClock(fake: FakeService, body: Record<string, unknown>): Promise<void> {
  if (body.advanceTo !== undefined) {
    const target = new Date(body.advanceTo as string);
    if (typeof body.advanceTo !== 'string' || Number.isNaN(target.getTime())) {
      throw new FakeServiceError('R-400', 400, 'advanceTo must be an ISO 8601 date.');
    }
    await fake.clock.advanceTo(target);
  } else if (body.advanceBy !== undefined) {
    await fake.clock.advanceBy(body.advanceBy as Duration);
  } else {
    throw new FakeServiceError('R-400', 400, 'Send {"advanceBy": …} or {"advanceTo": "…"}.');
  }
  await fake.idle();
}

/**
 * The admin routes a test in any language uses to drive a running fake service the way an in-process test calls
 * the engine: the test clock, the delivery log, and the operations whose API the spec does not show. Each call
 * needs the project's `X-API-KEY` (endpoints key).
 *
 * - `GET  /__payhook/clock` → `{ now }`
 * - `POST /__payhook/clock` `{"advanceBy": {"months": 1}}` or `{"advanceTo": "2027-01-01T00:00:00Z"}` → runs every
 *   charge and retry due, waits for their webhooks, answers `{ now }`
 * - `GET  /__payhook/deliveries` → every delivery attempt with its answer
 * - `POST /__payhook/payments/<payment_id>/capture|void|refund` `{"amount"?: 10}` → the operation record
 * - `POST /__payhook/subscriptions/<id>/cancel` → `{ "status": "canceled" }`
 *
 * @example
 * await fetch(`${server.url}/__payhook/clock`, { method: 'POST', headers, body: '{"advanceBy":{"years":1}}' });
 */
export async function handleAdminRequest(fake: FakeService, request: ApiRequest): Promise<ApiResponse> {
  const path = new URL(request.url, 'http://fake.invalid').pathname
    .slice(ADMIN_PREFIX.length)
    .replace(/\/+$/, '');
  const method = request.method.toUpperCase();
  try {
    const key = header(request, 'x-api-key');
    if (key === undefined || !fake.projects.some((project) => project.endpointsKey === key)) {
      throw new FakeServiceError('S-404', 401, 'Invalid pos_id field or credentials');
    }
    if (path === '/clock' && method === 'GET') return json(200, { now: fake.clock.now().toISOString() });
    if (path === '/clock' && method === 'POST') {
      await moveClock(fake, readJson(request));
      return json(200, { now: fake.clock.now().toISOString() });
    }
    if (path === '/deliveries' && method === 'GET') return json(200, fake.deliveries);
    const operation = OPERATION.exec(path);
    if (operation && method === 'POST') {
      const paymentId = decodeURIComponent(operation[1]!);
      const amount = amountOf(optionalJson(request));
      const record =
        operation[2] === 'capture'
          ? fake.capture(paymentId, amount)
          : operation[2] === 'refund'
            ? fake.refund(paymentId, amount)
            : fake.void(paymentId);
      await fake.idle();
      return json(200, record);
    }
    const cancel = CANCEL.exec(path);
    if (cancel && method === 'POST') {
      fake.cancelSubscription(decodeURIComponent(cancel[1]!));
      return json(200, { status: 'canceled' });
    }
    throw new FakeServiceError('N-404', 404, 'Not found.');
  } catch (error) {
    return failure(error);
  }
}
