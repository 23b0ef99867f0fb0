import { withCapture } from './diagnostics/capture.js';
import { publishRefusal, tracedDelivery } from './diagnostics/channels.js';
import { createDriftWatch } from './diagnostics/drift.js';
import type { DeliveryMessage } from './diagnostics/messages.js';
import { createReport } from './diagnostics/report.js';
import { RequestError, SignatureError } from './errors.js';
import {
  accepted,
  asWebhookError,
  refusal,
  toResponse,
  type WebhookOutcome,
  type WebhookResult,
} from './http/answers.js';
import { getHeader, mediaTypeOf, readEnvelope } from './http/body.js';
import type { WebhookRequest } from './http/request.js';
import { createSenderCheck, senderAddress } from './http/sender.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification/types.js';
import { type ResolvedOptions, resolveOptions, type WebhookHandlerOptions } from './options.js';
import type { Received } from './protocol/delivery.js';
import { createEnqueuer } from './protocol/enqueue.js';
import { ExactlyOnce } from './protocol/exactly-once.js';
import { createKeyFor } from './protocol/key.js';
import { createProcess, createProcessor, type ProcessOptions } from './protocol/process.js';
import { type HandlerOptions, type NotificationHandler, Routes } from './protocol/routes.js';
import { isPromiseLike } from './runtime/promise.js';
import { verifyEnvelope } from './verify/verify.js';

export type { ErrorHook } from './diagnostics/report.js';
export type { WebhookOutcome, WebhookResult } from './http/answers.js';
export type { WebhookRequest } from './http/request.js';
export type { WebhookHandlerOptions } from './options.js';
export type { Delivery } from './protocol/delivery.js';
export type { ProcessOptions } from './protocol/process.js';
export type { HandlerOptions, NotificationHandler } from './protocol/routes.js';

/** The framework-agnostic webhook handler: call it with a request, answer with the result. */
export interface WebhookHandler<C = undefined> {
  (request: WebhookRequest, context: C): Promise<WebhookResult>;
  /**
   * Adds a handler for a method (`purchase`), `recurring` (a subscription's first payment and each scheduled
   * charge), or either with a status (`refund.success`); the events table of the README says what each matches.
   */
  on<E extends NotificationEvent>(
    event: E,
    handler: NotificationHandler<NotificationFor<E>, C>,
    options?: HandlerOptions,
  ): WebhookHandler<C>;
  /** Adds a handler for every notification. */
  onAny(handler: NotificationHandler<Notification, C>, options?: HandlerOptions): WebhookHandler<C>;
  /** The same handler for Fetch API runtimes: Next.js route handlers, Hono, Bun, Deno. */
  fetch(request: Request, context?: C, remoteAddress?: string): Promise<Response>;
  /**
   * Runs a notification's handlers outside a request (a queue worker, a reconciler with a record fetched from the
   * API): the same routes and order, the same key, `ordering` and exactly-once protocol as a delivery, so a copy
   * delivered later is a duplicate and a handler that succeeded before is not run again. Resolves the outcome a
   * delivery would answer with 200; throws the `WebhookError` it would answer otherwise (also given to `onError`).
   * It never enqueues, even with the `queue` option: it is what a queue worker calls to run the handlers. A
   * notification reaching handlers registered `{ inline: true }` and others runs both parts here, each under its own
   * key as in a request and its worker (`queued: true` runs only the worker's part).
   *
   * @example
   * const outcome = await webhook.process(notification); // 'handled' | 'duplicate' | 'ignored' | 'stale'
   */
  process(
    notification: Notification,
    context?: C,
    options?: ProcessOptions,
  ): Promise<Exclude<WebhookOutcome, 'refused' | 'queued' | 'handled+queued'>>;
  /**
   * Resolves once no run of this webhook is going on in this process: each committed, released or given up, also
   * those that went on after their answer (past `handlerTimeoutMs`). Await it before closing the store at shutdown.
   *
   * @example
   * await worker.stop(); await webhook.settled(); await redis.quit();
   */
  settled(): Promise<void>;
}

/**
 * Creates the webhook handler: checks method, sender, media type and size, verifies the signature in constant
 * time, decodes and parses the notification, drops duplicates, and calls the application's handlers, each once
 * per notification. A notification is marked processed only after its handlers succeeded; a failure answers 500
 * so the service redelivers.
 *
 * @example
 * const webhook = createWebhookHandler({ secret: process.env.WEBHOOK_SECRET! })
 *   .on('purchase.success', async (payment) => fulfil(payment.order_id))
 *   .on('refund', async (refund) => recordRefund(refund.operation_id, refund.amount));
 * // node:http
 * http.createServer(createNodeListener(webhook));
 * // Fetch runtimes
 * export const POST = (request: Request) => webhook.fetch(request);
 */
export function createWebhookHandler<C = undefined>(options: WebhookHandlerOptions<C>): WebhookHandler<C> {
  const resolved = resolveOptions(options);
  const { algorithm, logger, secrets, limits, queue, capture } = resolved;
  const checkRequest = createRequestCheck(resolved);
  const report = createReport(resolved.onError, logger);
  const routes = new Routes<C>();
  if (resolved.handle) routes.addAny(resolved.handle);
  const keyFor = createKeyFor(resolved.key, logger);
  const once = new ExactlyOnce<C>({ ...resolved.protocol, report: (error) => report(error, undefined) });
  const processNotification = createProcessor(resolved, routes, keyFor, once);
  const enqueue =
    queue &&
    createEnqueuer(queue, routes, keyFor, resolved.storeTimeoutMs, {
      process: processNotification,
      transactional: once.transactional,
    });
  const watchDrift = createDriftWatch(logger);

  /** One delivery, top to bottom: each step throws its refusal, answered at the end (a step's promise awaited). */
  async function handle(
    request: WebhookRequest,
    context: C,
    traced?: DeliveryMessage,
  ): Promise<WebhookResult> {
    let notification: Notification | undefined;
    try {
      checkRequest(request);
      const type = mediaTypeOf(getHeader(request.headers, 'content-type'));
      const read = readEnvelope(request, type, limits);
      const envelope = isPromiseLike(read) ? await read : read;
      if (secrets === undefined) throw noSecret();
      const verification = verifyEnvelope(envelope, secrets, algorithm);
      const verified = isPromiseLike(verification) ? await verification : verification;
      const { secret } = verified;
      notification = verified.notification;
      watchDrift(notification);
      const received: Received<C> = {
        notification,
        context,
        secretIndex: secret.index,
        secretId: secret.id,
        traced,
      };
      const outcome: Exclude<WebhookOutcome, 'refused'> | PromiseLike<Exclude<WebhookOutcome, 'refused'>> =
        enqueue ? enqueue(received) : processNotification(received);
      return accepted(isPromiseLike(outcome) ? await outcome : outcome, notification);
    } catch (error) {
      const known = asWebhookError(error);
      report(known, request.remoteAddress);
      publishRefusal('request', known.code, known.status);
      return refusal(known, notification);
    }
  }

  const deliver = tracedDelivery(handle);
  const handler = withMethods(capture ? withCapture(deliver, capture, keyFor) : deliver, routes);
  handler.process = createProcess(processNotification, report);
  handler.settled = () => once.settled();
  return handler;
}

/** A delivery to a webhook built without `secret`: nothing can verify it, and the service's retry is safe. */
function noSecret(): SignatureError {
  return new SignatureError(
    'secret.unavailable',
    'this webhook was built without a secret (a definition for queue workers, which run handlers with process()): it cannot verify a delivery. Give it `secret` where it receives webhooks.',
  );
}

function createRequestCheck(
  options: Pick<ResolvedOptions<never>, 'allowedSenders' | 'trustProxy'>,
): (request: WebhookRequest) => void {
  const senderAllowed = options.allowedSenders ? createSenderCheck(options.allowedSenders) : undefined;
  return (request) => {
    if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
      throw new RequestError(
        'request.method_not_allowed',
        `${request.method} is not accepted: webhooks are POSTed.`,
      );
    }
    const sender = senderAllowed && senderAddress(request.headers, request.remoteAddress, options.trustProxy);
    if (senderAllowed && !senderAllowed(sender)) {
      throw new RequestError('sender.forbidden', 'the sender address is not in allowedSenders.');
    }
  };
}

function withMethods<C>(
  handle: (request: WebhookRequest, context: C) => Promise<WebhookResult>,
  routes: Routes<C>,
): WebhookHandler<C> {
  const handler = handle as WebhookHandler<C>;
  handler.on = (event, fn, options) => {
    routes.add(event, fn as NotificationHandler<Notification, C>, options);
    return handler;
  };
  handler.onAny = (fn, options) => {
    routes.addAny(fn, options);
    return handler;
  };
  handler.fetch = async (request, context, remoteAddress) =>
    toResponse(
      await handle(
        {
          method: request.method,
          headers: request.headers,
          stream: request.body ?? undefined,
          remoteAddress,
        },
        context as C,
      ),
    );
  return handler;
}
