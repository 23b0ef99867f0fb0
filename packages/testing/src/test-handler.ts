import { type Delivery, type Notification, notificationKey, parseNotification } from '@payhook/core';

/**
 * One call that reached the application handler.
 *
 * @example
 * const [call] = recorder.calls;
 * call?.delivery.secretIndex; // 0
 */
export interface RecordedCall {
  readonly notification: Notification;
  readonly delivery: Delivery;
  readonly context: unknown;
  /** True when the handler threw on purpose (`failNext`): the notification was not marked processed. */
  readonly failed: boolean;
}

/**
 * What `expectHandledOnce` and `countHandled` match: an operation id, or a notification (same key).
 *
 * @example
 * recorder.countHandled(refund.operation_id); // by id
 * recorder.countHandled(refund); // by id, method, status and code
 */
export type CallMatcher = string | object;

/**
 * An application handler that records its calls and checks them.
 *
 * @example
 * const recorder: TestHandler = createTestHandler();
 * app.use('/webhooks', webhookMiddleware({ secret }).onAny(recorder.handle));
 */
export interface TestHandler {
  /** Pass as `handle`, or to `onAny` / `on(event, …)`. */
  readonly handle: (notification: Notification, context: unknown, delivery: Delivery) => Promise<void>;
  /** Every call in order, failed ones included. */
  readonly calls: readonly RecordedCall[];
  /** How many times a matching notification was handled successfully. */
  countHandled(match: CallMatcher): number;
  /** Throws unless a matching notification was handled successfully exactly once. */
  expectHandledOnce(match: CallMatcher): RecordedCall;
  /** Throws if a matching notification was handled successfully. */
  expectNotHandled(match: CallMatcher): void;
  /** Makes the next `times` calls throw `error`, as a failing application would (core answers 500). */
  failNext(times?: number, error?: Error): void;
  /** Forgets every call. */
  reset(): void;
}

/** The id core's default key starts with: operation_id, a recurring charge's transaction_id, or payment_id. */
function operationId(notification: Notification): string {
  return (notificationKey(notification) ?? notification.payment_id).split(':', 1)[0]!;
}

function describe(match: CallMatcher): string {
  return typeof match === 'string' ? `id ${match}` : `notification ${keyOf(match)}`;
}

function keyOf(match: object): string {
  const parsed =
    'kind' in match ? (match as Notification) : parseNotification(match as Record<string, unknown>);
  return notificationKey(parsed) ?? parsed.payment_id;
}

/**
 * Records what reaches the application handler, so a test asserts "handled exactly once" rather than "answered
 * 200". A string matches the operation id (payment_id, operation_id for capture/void/refund, transaction_id for
 * a recurring charge); a notification matches by core's duplicate key (id, method, status and code).
 * Throws plain `Error`s: works with vitest, jest and node:test alike.
 *
 * @example
 * const app = createTestHandler();
 * const webhook = createWebhookHandler({ secret, handle: app.handle });
 * // … post a purchase twice …
 * app.expectHandledOnce(purchase);
 */
export function createTestHandler(): TestHandler {
  const calls: RecordedCall[] = [];
  const failures: Error[] = [];

  const matches = (call: RecordedCall, match: CallMatcher): boolean =>
    typeof match === 'string'
      ? operationId(call.notification) === match
      : notificationKey(call.notification) === keyOf(match);
  const handledCalls = (match: CallMatcher) => calls.filter((call) => !call.failed && matches(call, match));
  const summary = () =>
    calls.length === 0
      ? 'no calls were recorded'
      : `recorded calls: ${calls
          .map((c) => `${notificationKey(c.notification)}${c.failed ? ' (failed)' : ''}`)
          .join(', ')}`;

  return {
    async handle(notification, context, delivery) {
      const error = failures.shift();
      calls.push({ notification, delivery, context, failed: error !== undefined });
      if (error) throw error;
    },
    calls,
    countHandled: (match) => handledCalls(match).length,
    expectHandledOnce(match) {
      const found = handledCalls(match);
      if (found.length !== 1) {
        throw new Error(
          `[@payhook/testing] expected ${describe(match)} to be handled exactly once, but it was handled ${found.length} times; ${summary()}.`,
        );
      }
      return found[0]!;
    },
    expectNotHandled(match) {
      const found = handledCalls(match);
      if (found.length > 0) {
        throw new Error(
          `[@payhook/testing] expected ${describe(match)} not to be handled, but it was handled ${found.length} times.`,
        );
      }
    },
    failNext(times = 1, error = new Error('[@payhook/testing] handler failure requested by failNext()')) {
      for (let i = 0; i < times; i++) failures.push(error);
    },
    reset() {
      calls.length = 0;
      failures.length = 0;
    },
  };
}
