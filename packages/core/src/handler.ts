import { withCapture } from './diagnostics/capture.js';
import {
  deliveryMessage,
  describeDelivery,
  driftSubscribed,
  publishRefusal,
  traceDelivery,
} from './diagnostics/channels.js';
import { reportDrift } from './diagnostics/drift.js';
import type { DeliveryMessage } from './diagnostics/messages.js';
import { createReport } from './diagnostics/report.js';
import { ERROR_STATUS, RequestError, SignatureError, type WebhookError } from './errors.js';
import {
  accepted,
  asWebhookError,
  refusal,
  toResponse,
  type WebhookOutcome,
  type WebhookResult,
} from './http/answers.js';
import { getHeader, mediaTypeOf, readEnvelope } from './http/body.js';
import type { Envelope, MediaType, WebhookRequest } from './http/request.js';
import { createSenderCheck, normalizeAddress, senderAddress } from './http/sender.js';
import { findDrift } from './notification/drift.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification/types.js';
import { type ResolvedOptions, resolveOptions, type WebhookHandlerOptions } from './options.js';
import type { DeliveryFacts, ProcessOptions, Received, Within } from './protocol/delivery.js';
import { createEnqueuer, type Enqueuer } from './protocol/enqueue.js';
import { ExactlyOnce, type Outcome, type Work } from './protocol/exactly-once.js';
import { boundKey } from './protocol/key.js';
import { runLedgered } from './protocol/ledger.js';
import {
  type HandlerOptions,
  type NotificationHandler,
  type Part,
  type PartRun,
  partRuns,
  Routes,
} from './protocol/routes.js';
import { readRelayed } from './verify/relay-header.js';
import { verifyEnvelope } from './verify/verify.js';

export type { ErrorHook } from './diagnostics/report.js';
export type { WebhookOutcome, WebhookResult } from './http/answers.js';
export type { WebhookRequest } from './http/request.js';
export type { WebhookHandlerOptions } from './options.js';
export type { Delivery, ProcessOptions } from './protocol/delivery.js';
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
  const webhook = new Webhook<C>(resolveOptions(options));
  const { capture } = webhook.options;
  // The handler and its methods made at once: there is no moment it lacks `process` or `settled`.
  const deliver = capture
    ? withCapture<WebhookRequest, C | undefined>(
        (r, c) => webhook.deliver(r, c),
        capture,
        (n) => webhook.keyOf(n),
      )
    : webhook.deliver.bind(webhook);
  const handler: WebhookHandler<C> = Object.assign(deliver, {
    on<E extends NotificationEvent>(
      event: E,
      fn: NotificationHandler<NotificationFor<E>, C>,
      handlerOptions?: HandlerOptions,
    ) {
      webhook.routes.add(event, fn as NotificationHandler<Notification, C>, handlerOptions);
      return handler;
    },
    onAny(fn: NotificationHandler<Notification, C>, handlerOptions?: HandlerOptions) {
      webhook.routes.addAny(fn, handlerOptions);
      return handler;
    },
    async fetch(request: Request, context?: C, remoteAddress?: string) {
      const stream = request.body ?? undefined;
      return toResponse(
        await deliver({ method: request.method, headers: request.headers, stream, remoteAddress }, context),
      );
    },
    process: ((notification: Notification, context?: C, processOptions?: ProcessOptions) =>
      webhook.processOutside(notification, context, processOptions)) as WebhookHandler<C>['process'],
    settled: () => webhook.once.settled(),
  });
  return handler;
}

/** A delivery's 200 outcomes but those of a queue: how the handlers took a notification. */
type Processed = Exclude<WebhookOutcome, 'refused' | 'queued' | 'handled+queued'>;

/** How `process` took a notification: a delivery's 200 outcomes (a queue's with `enqueue`). */
type Taken = Exclude<WebhookOutcome, 'refused'>;

/**
 * One webhook, its options resolved once. `deliver` is one request top to bottom, each step a method of this class
 * or a named call into the file that decides it, down to the store's commit in `ExactlyOnce.run`.
 */
class Webhook<C> {
  readonly options: ResolvedOptions<C>;
  readonly routes = new Routes<C>();
  readonly once: ExactlyOnce<C>;
  readonly #report: (error: WebhookError, remoteAddress: string | undefined) => void;
  readonly #enqueue: Enqueuer<C> | undefined;
  readonly #senderAllowed: ((address: string | undefined) => boolean) | undefined;

  constructor(options: ResolvedOptions<C>) {
    this.options = options;
    if (options.handle) this.routes.addAny(options.handle);
    const report = createReport(options.onError, options.logger);
    this.#report = report;
    this.once = new ExactlyOnce<C>({ ...options.protocol, report: (error) => report(error, undefined) });
    this.#senderAllowed = options.allowedSenders ? createSenderCheck(options.allowedSenders) : undefined;
    this.#enqueue =
      options.queue &&
      createEnqueuer(options.queue, this.routes, (n) => this.keyOf(n), options.storeTimeoutMs, {
        process: (received, part, within) => this.process(received, part, within),
        transactional: this.once.transactional,
        ledgered: options.ledger !== undefined,
      });
  }

  /** One request, traced on `payhook:delivery` when anyone listens. */
  deliver(request: WebhookRequest, context: C | undefined): Promise<WebhookResult> {
    const traced = deliveryMessage('request');
    if (traced === undefined) return this.handle(request, context, undefined);
    return traceDelivery(traced, () => this.handle(request, context, traced), finishDelivery);
  }

  /** One delivery, top to bottom: each step throws its refusal, answered at the end (a step's promise awaited). */
  async handle(
    request: WebhookRequest,
    context: C | undefined,
    traced: DeliveryMessage | undefined,
  ): Promise<WebhookResult> {
    const { secrets, algorithm, limits } = this.options;
    let notification: Notification | undefined;
    let sender: string | undefined;
    try {
      sender = this.checkRequest(request);
      const type = mediaTypeOf(getHeader(request.headers, 'content-type'));
      let read: Envelope | Promise<Envelope>;
      if (this.options.relay === undefined) read = readEnvelope(request, type, limits);
      else ({ envelope: read, sender } = await this.readRelayed(request, type));
      const envelope = read instanceof Promise ? await read : read;
      if (secrets === undefined) throw noSecret();
      const verification = verifyEnvelope(envelope, secrets, algorithm);
      const { secret, notification: verified } =
        verification instanceof Promise ? await verification : verification;
      notification = verified;
      const { logger } = this.options;
      const drift = logger || driftSubscribed() ? findDrift(notification) : undefined;
      if (drift !== undefined) reportDrift(notification, drift, logger);
      const received: Received<C> = {
        notification,
        context,
        secretIndex: secret.index,
        secretId: secret.id,
        traced,
      };
      const outcome = this.#enqueue ? this.#enqueue(received) : this.process(received);
      return accepted(outcome instanceof Promise ? await outcome : outcome, notification, sender);
    } catch (error) {
      const known = asWebhookError(error);
      this.#report(known, request.remoteAddress);
      publishRefusal('request', known.code, known.status);
      return refusal(known, notification, sender);
    }
  }

  /**
   * The method (405) and, with `allowedSenders`, the sender (403), whose address it returns; with `relay`, the
   * sender is checked once the relay's header was (`readRelayed`).
   */
  checkRequest(request: WebhookRequest): string | undefined {
    if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
      throw new RequestError(
        'request.method_not_allowed',
        `${request.method} is not accepted: webhooks are POSTed.`,
      );
    }
    if (this.#senderAllowed === undefined || this.options.relay !== undefined) return undefined;
    return this.checkSender(senderAddress(request.headers, request.remoteAddress, this.options.trustProxy));
  }

  checkSender(sender: string | undefined): string | undefined {
    if (this.#senderAllowed !== undefined && !this.#senderAllowed(sender)) {
      throw new RequestError('sender.forbidden', 'the sender address is not in allowedSenders.');
    }
    return sender;
  }

  /** With `relay`: the envelope and the sender, the original one when the relay's header names it, checked. */
  async readRelayed(
    request: WebhookRequest,
    type: MediaType,
  ): Promise<{ envelope: Envelope | Promise<Envelope>; sender: string | undefined }> {
    const { relay, limits, trustProxy } = this.options;
    const relayed = await readRelayed(request, type, limits, relay!);
    if (relayed !== undefined)
      return { envelope: relayed.envelope, sender: this.checkSender(normalizeAddress(relayed.sender)) };
    const sender = this.checkSender(senderAddress(request.headers, request.remoteAddress, trustProxy));
    return { envelope: readEnvelope(request, type, limits), sender };
  }

  /**
   * What a delivery and `process` share once a notification is verified: its key, its handlers, one run of them (two
   * with inline and queued handlers: `part` says which, `within` runs in the inline part's transaction). With a
   * `ledger`, the run of the notification's own key records it first (protocol/ledger.ts): a stale or conflicting
   * notification runs no handler, answered 200 `stale` or `conflict`, and its queued part is not queued.
   */
  process(received: Received<C>, part: Part = 'all', within?: Within): Processed | Promise<Processed> {
    const { notification, context, traced, caller } = received;
    const key = this.keyOf(notification);
    const delivery: DeliveryFacts = {
      key,
      secretIndex: received.secretIndex,
      secretId: received.secretId,
      raw: notification.raw,
    };
    const handlers = this.routes.match(notification);
    if (traced) describeDelivery(traced, notification, delivery, handlers.length);
    const { ledger } = this.options;
    if (ledger === undefined) {
      if (handlers.length === 0) return 'ignored';
      // The common delivery (`pnpm bench`'s hot path): one run, nothing built for parts. A worker's queued handlers
      // run each as a step of its own (`Work.steps`), where the store can.
      if (!this.routes.hasInline) {
        return this.once.run({
          key,
          handlers,
          notification,
          context,
          delivery,
          caller,
          steps: part === 'queued',
        });
      }
    }
    const runs: PartRun<C>[] = this.routes.hasInline
      ? partRuns(handlers, key, part)
      : [{ handlers, key, steps: part === 'queued' }];
    if (runs.length === 0) return 'ignored';
    const works = runs.map(
      (run): Work<C> => ({
        ...run,
        notification,
        context,
        delivery: { ...delivery, key: run.key },
        caller,
        within,
      }),
    );
    if (ledger !== undefined) return runLedgered(ledger, works, key, this.once);
    return works.length > 1 ? this.runParts(works) : this.once.run(works[0]!);
  }

  /** The parts' runs one after the other: `duplicate` only when each was. */
  async runParts(works: Work<C>[]): Promise<Outcome> {
    let outcome: Outcome = 'duplicate';
    for (const work of works) if ((await this.once.run(work)) === 'handled') outcome = 'handled';
    return outcome;
  }

  /** The key as stores keep it; `undefined` (with a warning) when nothing in the notification tells it apart. */
  keyOf(notification: Notification): string | undefined {
    const key = this.options.key(notification);
    if (key !== undefined) return boundKey(key);
    const { logger } = this.options;
    if (logger) {
      logger.warn(
        `[@payhook/core] a ${notification.method} notification of payment ${notification.payment_id} carries nothing that tells it apart from another (a recurring charge without transaction_id or processed_at): it is handled without duplicate detection.`,
      );
    }
    return undefined;
  }

  /**
   * `webhook.process`: the processor outside a request, its refusals reported and thrown, traced when anyone listens.
   * With `enqueue` and a webhook that has a queue, the notification is handed to it as a delivery would be.
   */
  processOutside(notification: Notification, context?: C, options?: ProcessOptions): Promise<Taken> {
    const { secretIndex = -1, secretId, queued, enqueue } = options ?? {};
    // The options themselves: their `signal` is read only if a run needs it.
    const received: Received<C> = { notification, context, secretIndex, secretId, caller: options };
    const part: Part = queued === true ? 'queued' : 'all';
    const viaQueue = enqueue === true && queued !== true;
    const traced = deliveryMessage('process');
    if (traced === undefined) return this.processOrThrow(received, part, viaQueue);
    return traceDelivery(
      traced,
      () => this.processOrThrow({ ...received, traced }, part, viaQueue),
      finishProcess,
    );
  }

  async processOrThrow(received: Received<C>, part: Part, viaQueue: boolean): Promise<Taken> {
    try {
      return await (viaQueue && this.#enqueue ? this.#enqueue(received) : this.process(received, part));
    } catch (error) {
      const known = asWebhookError(error);
      this.#report(known, undefined);
      publishRefusal('process', known.code, known.status);
      throw known;
    }
  }
}

/** A delivery to a webhook built without `secret`: nothing can verify it, and the service's retry is safe. */
function noSecret(): SignatureError {
  return new SignatureError(
    'secret.unavailable',
    'this webhook was built without a secret (a definition for queue workers, which run handlers with process()): it cannot verify a delivery. Give it `secret` where it receives webhooks.',
  );
}

function finishDelivery(message: DeliveryMessage, result: WebhookResult | undefined): void {
  message.outcome = result?.outcome;
  message.status = result?.status;
  message.errorCode = result?.error?.code;
  message.hint = (result?.error as SignatureError | undefined)?.hint;
}

function finishProcess(message: DeliveryMessage, outcome: Taken | undefined, error: unknown): void {
  const code = (error as WebhookError | undefined)?.code;
  message.outcome = outcome ?? 'refused';
  message.errorCode = code;
  message.status = code === undefined ? 200 : ERROR_STATUS[code];
}
