import { failure, header, json, readJson } from './api.js';
import type { Duration } from './calendar.js';
import { FakeServiceError } from './errors.js';
import type { ApiRequest, ApiResponse } from './exchange.js';
import type { DeliveryFaults } from './outbox.js';
import type { PaymentOutcome } from './outcomes.js';
import type { FakeService } from './service.js';

/** Where the admin routes of `startFakeServer` and `payhook serve` live: not part of the service's API. */
export const ADMIN_PREFIX = '/__payhook';

const OPERATION = /^\/payments\/([^/]+)\/(capture|void|refund)$/;
const CANCEL = /^\/subscriptions\/([^/]+)\/cancel$/;
const CHARGE_OUTCOMES = /^\/subscriptions\/([^/]+)\/outcomes$/;
const OUTCOMES: readonly string[] = [
  'success',
  '3ds',
  'decline',
  'insufficient_funds',
] satisfies PaymentOutcome[];

function outcomeOf(value: unknown, field: string): PaymentOutcome {
  if (typeof value !== 'string' || !OUTCOMES.includes(value)) {
    throw new FakeServiceError('R-400', 400, `${field} must be one of: ${OUTCOMES.join(', ')}.`);
  }
  return value as PaymentOutcome;
}

function setOutcome(fake: FakeService, body: Record<string, unknown>): Record<string, unknown> {
  const outcome = outcomeOf(body.outcome, 'outcome');
  const { orderId, cardNumber } = body;
  if (typeof orderId === 'string' && orderId !== '' && cardNumber === undefined) {
    fake.setOutcome({ orderId }, outcome);
    return { orderId, outcome };
  }
  if (typeof cardNumber === 'string' && cardNumber !== '' && orderId === undefined) {
    fake.setOutcome({ cardNumber }, outcome);
    return { cardNumber, outcome };
  }
  throw new FakeServiceError('R-400', 400, 'Send {"orderId": "…"} or {"cardNumber": "…"} with "outcome".');
}

function faultsOf(body: Record<string, unknown>): DeliveryFaults {
  const { duplicate, delayMs, drop, loseFirstAttempt, hold, ...rest } = body;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) {
    throw new FakeServiceError(
      'R-400',
      400,
      `Unknown fault ${JSON.stringify(unknown[0])}: duplicate, delayMs, drop, loseFirstAttempt, hold.`,
    );
  }
  const count = (value: unknown, name: string) => {
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 0)) {
      throw new FakeServiceError('R-400', 400, `${name} must be an integer of 0 or more.`);
    }
  };
  count(duplicate, 'duplicate');
  count(delayMs, 'delayMs');
  for (const [name, value] of Object.entries({ drop, loseFirstAttempt, hold })) {
    if (value !== undefined && typeof value !== 'boolean') {
      throw new FakeServiceError('R-400', 400, `${name} must be true or false.`);
    }
  }
  return body as DeliveryFaults;
}

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
 * - `POST /__payhook/outcomes` `{"orderId": "o-1", "outcome": "decline"}` (or `"cardNumber"`; outcomes `success`,
 *   `3ds`, `decline`, `insufficient_funds`) → the choice, as `setOutcome`
 * - `POST /__payhook/subscriptions/<id>/outcomes` `{"outcomes": ["decline", "success"]}` → the next charges'
 *   outcomes, as `queueChargeOutcomes`
 * - `POST /__payhook/faults` `{"duplicate": 1, "delayMs": 5000, "drop": false, "loseFirstAttempt": false, "hold": false}`
 *   (`{}` clears) → delivery faults
 *   for webhooks sent from now on, as `setDeliveryFaults`
 * - `POST /__payhook/outbox/pause`, then `POST /__payhook/outbox/resume` `{"reverse": true}` → holds webhooks and
 *   delivers them late, newest first (a reordering) → `{ held }`
 * - `GET  /__payhook/dropped` → webhooks lost to the `drop` fault
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
    const answer =
      method === 'GET'
        ? readRoute(fake, path)
        : method === 'POST'
          ? await actionRoute(fake, path, request)
          : undefined;
    if (answer === undefined) throw new FakeServiceError('N-404', 404, 'Not found.');
    return answer;
  } catch (error) {
    return failure(error);
  }
}

/** The GET routes: what the fake holds, read without changing it. */
function readRoute(fake: FakeService, path: string): ApiResponse | undefined {
  if (path === '/clock') return json(200, { now: fake.clock.now().toISOString() });
  if (path === '/deliveries') return json(200, fake.deliveries);
  if (path === '/dropped') return json(200, fake.outbox.dropped);
  return undefined;
}

/** The POST routes: each moves the fake (its clock, a payment, the outcomes, the faults, the outbox). */
async function actionRoute(
  fake: FakeService,
  path: string,
  request: ApiRequest,
): Promise<ApiResponse | undefined> {
  if (path === '/clock') {
    await moveClock(fake, readJson(request));
    return json(200, { now: fake.clock.now().toISOString() });
  }
  const operation = OPERATION.exec(path);
  if (operation) return json(200, await operate(fake, operation, request));
  if (path === '/outcomes') return json(200, setOutcome(fake, readJson(request)));
  const chargeOutcomes = CHARGE_OUTCOMES.exec(path);
  if (chargeOutcomes) return json(200, queueChargeOutcomes(fake, chargeOutcomes, request));
  if (path === '/faults') {
    const faults = faultsOf(optionalJson(request));
    fake.setDeliveryFaults(faults);
    return json(200, faults);
  }
  if (path === '/outbox/pause') {
    fake.outbox.pause();
    return json(200, { held: fake.outbox.held });
  }
  if (path === '/outbox/resume') {
    await resumeOutbox(fake, optionalJson(request));
    return json(200, { held: fake.outbox.held });
  }
  const cancel = CANCEL.exec(path);
  if (cancel) {
    fake.cancelSubscription(decodeURIComponent(cancel[1]!));
    return json(200, { status: 'canceled' });
  }
  return undefined;
}

/** A capture, void or refund of the payment in the path, its webhook delivered: the operation record. */
async function operate(fake: FakeService, operation: RegExpExecArray, request: ApiRequest): Promise<unknown> {
  const paymentId = decodeURIComponent(operation[1]!);
  const amount = amountOf(optionalJson(request));
  const record =
    operation[2] === 'capture'
      ? fake.capture(paymentId, amount)
      : operation[2] === 'refund'
        ? fake.refund(paymentId, amount)
        : fake.void(paymentId);
  await fake.idle();
  return record;
}

function queueChargeOutcomes(
  fake: FakeService,
  subscription: RegExpExecArray,
  request: ApiRequest,
): { outcomes: PaymentOutcome[] } {
  const { outcomes } = readJson(request);
  if (!Array.isArray(outcomes)) throw new FakeServiceError('R-400', 400, 'outcomes must be an array.');
  const queued = outcomes.map((o, i) => outcomeOf(o, `outcomes[${i}]`));
  fake.queueChargeOutcomes(decodeURIComponent(subscription[1]!), queued);
  return { outcomes: queued };
}

async function resumeOutbox(fake: FakeService, body: Record<string, unknown>): Promise<void> {
  const { reverse } = body;
  if (reverse !== undefined && typeof reverse !== 'boolean') {
    throw new FakeServiceError('R-400', 400, 'reverse must be true or false.');
  }
  await fake.outbox.resume({ reverse: reverse === true });
}
