import { type DeliveryCapture, withCapture } from './diagnostics/capture.js';
import { publishRefusal, tracedDelivery } from './diagnostics/channels.js';
import { createDriftWatch } from './diagnostics/drift.js';
import type { DeliveryMessage } from './diagnostics/messages.js';
import { createReport } from './diagnostics/report.js';
import { RequestError, SignatureError, type WebhookError } from './errors.js';
import {
  accepted,
  asWebhookError,
  refusal,
  toResponse,
  type WebhookOutcome,
  type WebhookResult,
} from './http/answers.js';
import { type BodyStream, getHeader, type HeaderBag, mediaTypeOf, readEnvelope } from './http/body.js';
import { createSenderCheck, type SenderOptions, senderAddress } from './http/sender.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification/types.js';
import { type ResolvedOptions, resolveOptions } from './options.js';
import type { Received } from './protocol/delivery.js';
import { createEnqueuer } from './protocol/enqueue.js';
import { ExactlyOnce } from './protocol/exactly-once.js';
import { createKeyFor, type KeyFunction } from './protocol/key.js';
import type { WebhookLedger } from './protocol/ledger.js';
import { createProcess, createProcessor } from './protocol/process.js';
import type { NotificationQueue } from './protocol/queue.js';
import { type HandlerOptions, type NotificationHandler, Routes } from './protocol/routes.js';
import { isPromiseLike } from './runtime/promise.js';
import type { DedupeStore, TransactionalStore } from './stores/contract.js';
import type { Secrets } from './verify/secrets.js';
import type { SignatureAlgorithm } from './verify/signature.js';
import { verifyEnvelope } from './verify/verify.js';

export type { WebhookOutcome, WebhookResult } from './http/answers.js';
export type { Delivery } from './protocol/delivery.js';
export type { HandlerOptions, NotificationHandler } from './protocol/routes.js';

/** One incoming HTTP request, as any framework can describe it. */
export interface WebhookRequest {
  /** The HTTP method; only POST is accepted. */
  method?: string;
  headers: HeaderBag;
  /**
   * The body: raw bytes or text the framework kept, an object a body parser built, or a stream to read.
   * When it is absent or an empty object, `stream` is read instead.
   */
  body?: unknown;
  /** The request stream, read when `body` holds nothing (no body parser ran, or one for another type). */
  stream?: BodyStream;
  /** The peer address of the socket, for `allowedSenders`. */
  remoteAddress?: string;
}

/** Receives every refusal and store failure, for metrics and logs. Never sees a secret or a payload. */
export type ErrorHook = (error: WebhookError, request: { remoteAddress: string | undefined }) => void;

export interface WebhookHandlerOptions<C = undefined> extends SenderOptions {
  /**
   * The project's secret, several while rotating (current first), or a resolver by `pos_id`. Left out, the webhook
   * only runs handlers with `process` (a queue worker's definition) and answers every delivery 503
   * `secret.unavailable`; given but `undefined` (an unset environment variable) it throws when built.
   */
  secret?: Secrets;
  /** @default 'sha256' */
  algorithm?: SignatureAlgorithm;
  /** Called for every notification (as `onAny`, before any other `onAny`). */
  handle?: NotificationHandler<Notification, C>;
  /**
   * Where processed notifications are remembered; `false` turns duplicate detection off.
   * @default new MemoryStore()
   */
  store?: DedupeStore | TransactionalStore | false;
  /** @default notificationKey */
  key?: KeyFunction;
  /**
   * How long a claim lives without renewal. It is renewed every third of this while the handler runs, so it
   * bounds how long a crashed process's claim delays the redelivery, not how long a handler may take.
   * @default 15_000
   */
  leaseMs?: number;
  /**
   * How long a handled notification is remembered as done.
   * @default 604_800_000 (7 days)
   */
  ttlMs?: number;
  /**
   * How long a copy waits while another copy of the same notification is in progress, before answering 409.
   * @default 5_000
   */
  inFlightWaitMs?: number;
  /**
   * The longest the request waits for the application's handlers: past it the answer is 503 (`handler.timeout`)
   * so the service retries later, while the handlers go on (never started a second time meanwhile).
   * @default 20_000
   */
  handlerTimeoutMs?: number;
  /**
   * The longest one call to the duplicate store may take before the answer is 503 (`store.unavailable`); with
   * `queue`, also the longest one enqueue may take (503 `queue.unavailable`).
   * @default 2_000
   */
  storeTimeoutMs?: number;
  /** @default 1_048_576 (1 MiB) */
  maxBodyBytes?: number;
  /**
   * The longest a body may take to arrive (slow senders are cut off with 408).
   * @default 10_000
   */
  readTimeoutMs?: number;
  /**
   * A record of what each payment is (`createPaymentLedger` of `@payhook/payments`), kept where the claim is kept:
   * every notification is recorded once it holds its claim, before its handlers (with `PostgresInbox`, inside the
   * claim's transaction). One earlier in the payment's cycle than its state (pending after success) answers 200
   * `stale`, one contradicting it (a failure after a success) 200 `conflict`; neither reaches a handler.
   * @default none: every notification reaches its handlers, in the order it arrives
   */
  ledger?: WebhookLedger;
  /** Sees every refusal and store failure, with the error the application threw as its `cause`. */
  onError?: ErrorHook;
  /**
   * When the store fails: `false` answers 503 (the service retries, nothing is lost); `true` runs the handler
   * without duplicate detection.
   * @default false
   */
  failOpen?: boolean;
  /**
   * Where diagnostics go (a secret with surrounding whitespace, a store failure, what a handler threw); `false`
   * for none.
   * @default console
   */
  logger?: Pick<Console, 'warn' | 'error'> | false;
  /**
   * Hands every verified notification to a queue instead of running its handlers in the request (`@payhook/queue`
   * builds one on BullMQ or PostgreSQL): the answer is 200 `queued` once the queue acknowledged the job (200
   * `duplicate` when a job under its key is queued, running, done or dead), 503 `queue.unavailable` when it refused
   * or did not answer within `storeTimeoutMs`. Workers run the handlers with `process`, so the web process and the
   * workers share one webhook definition: the same `.on(...)` handlers and `key`, since a notification no handler
   * takes is answered `ignored` here and never queued. The `ledger` records in the worker. Handlers
   * registered `{ inline: true }` run here instead, and the job is queued once they committed (200 `handled+queued`;
   * written by `PostgresInbox`'s transaction when the queue has `enqueueInTransaction`).
   */
  queue?: NotificationQueue;
  /**
   * Records every delivery (the notification with card and customer fields masked, and the answer) for
   * `replayDeliveries` in `@payhook/testing`; see `createCapture`. Off when not set; a failing capture never
   * changes or delays an answer.
   */
  capture?: DeliveryCapture;
}

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
   * API): the same routes and order, the same key, `ledger` and exactly-once protocol as a delivery, so a copy
   * delivered later is a duplicate and a handler that succeeded before is not run again. Resolves the outcome a
   * delivery would answer with 200; throws the `WebhookError` it would answer otherwise (also given to `onError`).
   * It never enqueues unless asked (`enqueue: true`), even with the `queue` option: it is what a queue worker calls
   * to run the handlers. A notification reaching handlers registered `{ inline: true }` and others runs both parts
   * here, each under its own key as in a request and its worker (`queued: true` runs only the worker's part).
   *
   * @example
   * const outcome = await webhook.process(notification); // 'handled' | 'duplicate' | 'ignored' | 'stale' | 'conflict'
   */
  process(
    notification: Notification,
    context?: C,
    options?: ProcessOptions & { enqueue?: false },
  ): Promise<Exclude<WebhookOutcome, 'refused' | 'queued' | 'handled+queued'>>;
  /**
   * With `enqueue: true`, a notification fetched from the API (a reconciler's, a payment watch's) is taken as a
   * delivery would be: where the webhook has a `queue`, its inline handlers run here and the rest is queued for a
   * worker (`queued`, `handled+queued`); without one, every handler runs here, as `process` always does.
   *
   * @example
   * const outcome = await webhook.process(record, undefined, { enqueue: true }); // 'queued' with a queue
   */
  process(
    notification: Notification,
    context: C | undefined,
    options: ProcessOptions & { enqueue: true },
  ): Promise<Exclude<WebhookOutcome, 'refused'>>;
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
 * What `process` passes on to the handlers' `delivery` about how the notification was verified.
 *
 * @example
 * await webhook.process(notification, undefined, { secretIndex: 0 });
 */
export interface ProcessOptions {
  /**
   * The position of the secret its signature matched, when it was verified as a webhook; -1 (the default) when it
   * was not (a record fetched from the API).
   */
  secretIndex?: number;
  /** That secret's `id`, when secrets are named. */
  secretId?: string;
  /** Aborts the handlers' `delivery.signal` when it aborts (a queue worker handing the job back at shutdown). */
  signal?: AbortSignal;
  /**
   * Runs only the handlers a queue worker runs: all but those registered `{ inline: true }`, which ran in the request
   * (`createWorker` passes it). `ignored` when the notification reaches none.
   * @default false
   */
  queued?: boolean;
  /**
   * Takes the notification as a delivery would: with the webhook's `queue`, inline handlers here and the rest
   * queued (the answer `queued` or `handled+queued`). Ignored with `queued: true` or without a `queue`.
   * @default false
   */
  enqueue?: boolean;
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
  const inline = {
    process: processNotification,
    transactional: once.transactional,
    ledgered: !!resolved.ledger,
  };
  const enqueue = queue && createEnqueuer(queue, routes, keyFor, resolved.storeTimeoutMs, inline);
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
  handler.process = createProcess(processNotification, report, enqueue || undefined);
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
