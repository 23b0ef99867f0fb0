import { accepted, asWebhookError, refusal, toResponse, type WebhookResult } from './answers.js';
import { type BodyStream, getHeader, type HeaderBag, mediaTypeOf, readEnvelope } from './body.js';
import { type DeliveryCapture, withCapture } from './capture.js';
import {
  boundKey,
  type DedupeStore,
  isTransactionalStore,
  type KeyFunction,
  notificationKey,
  type TransactionalStore,
} from './dedupe.js';
import type { Delivery } from './delivery.js';
import { RequestError, type WebhookError } from './errors.js';
import { ExactlyOnce } from './exactly-once.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification.js';
import { OrderingGuard, type OrderingOptions } from './ordering.js';
import { notificationFromData } from './parse.js';
import { type NotificationHandler, Routes } from './routes.js';
import { createSenderCheck, type SenderOptions, senderAddress } from './sender.js';
import {
  checkAlgorithm,
  checkSecretOption,
  type Secret,
  type Secrets,
  type SignatureAlgorithm,
  toSecretArray,
  verifySignature,
} from './signature.js';
import { MemoryStore } from './stores/memory.js';
import { verified } from './verify.js';

export type { WebhookOutcome, WebhookResult } from './answers.js';
export type { Delivery } from './delivery.js';
export type { NotificationHandler } from './routes.js';

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
  /** The project's secret, several while rotating (current first), or a resolver by `pos_id`. */
  secret: Secrets;
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
   * The longest one call to the duplicate store may take before the answer is 503 (`store.unavailable`).
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
   * Send a notification whose status is earlier in the cycle than one already handled for the same payment
   * (pending after success) to `onStale` instead of the handler.
   * @default false
   */
  ordering?: boolean | OrderingOptions;
  /** Receives stale notifications when `ordering` is on. */
  onStale?: NotificationHandler<Notification, C>;
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
  ): WebhookHandler<C>;
  /** Adds a handler for every notification. */
  onAny(handler: NotificationHandler<Notification, C>): WebhookHandler<C>;
  /** The same handler for Fetch API runtimes: Next.js route handlers, Hono, Bun, Deno. */
  fetch(request: Request, context?: C, remoteAddress?: string): Promise<Response>;
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
  const algorithm = checkAlgorithm(options.algorithm);
  const logger = options.logger === undefined ? console : options.logger;
  const secrets = checkedSecrets(options.secret, logger);
  const store = options.store === false ? undefined : (options.store ?? new MemoryStore());
  if (store !== undefined && !isStore(store)) {
    throw new TypeError(
      '[@payhook/core] store must have claim, renew, commit and release (a DedupeStore), or transaction (a TransactionalStore).',
    );
  }
  if (store !== undefined && isTransactionalStore(store) && options.failOpen) {
    throw new TypeError(
      '[@payhook/core] failOpen cannot be used with a transactional store: handlers would run without the transaction their writes need (inbox.client(delivery)).',
    );
  }
  const keyOf = options.key ?? notificationKey;
  const limits = {
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 1024 * 1024),
    readTimeoutMs: duration('readTimeoutMs', options.readTimeoutMs, 10_000),
  };
  const senderAllowed = options.allowedSenders ? createSenderCheck(options.allowedSenders) : undefined;
  const ordering = options.ordering
    ? new OrderingGuard(options.ordering === true ? undefined : options.ordering)
    : undefined;
  const routes = new Routes<C>();
  if (options.handle) routes.addAny(options.handle);
  const once = new ExactlyOnce<C>({
    store,
    leaseMs: duration('leaseMs', options.leaseMs, 15_000),
    ttlMs: positive('ttlMs', options.ttlMs, 7 * 24 * 60 * 60 * 1000),
    inFlightWaitMs: duration('inFlightWaitMs', options.inFlightWaitMs, 5_000, 0),
    handlerTimeoutMs: duration('handlerTimeoutMs', options.handlerTimeoutMs, 20_000),
    storeTimeoutMs: duration('storeTimeoutMs', options.storeTimeoutMs, 2_000),
    failOpen: options.failOpen ?? false,
    report: (error) => report(error, undefined),
  });

  /**
   * One delivery, top to bottom: every refusal is thrown by its step and answered at the end. Steps that may finish
   * at once (a body already read, static secrets, a synchronous store and handler) are awaited only when they
   * return a promise: each `await` of a plain value costs a turn of the microtask queue.
   */
  async function handle(request: WebhookRequest, context: C): Promise<WebhookResult> {
    let notification: Notification | undefined;
    try {
      checkMethodAndSender(request);
      const type = mediaTypeOf(getHeader(request.headers, 'content-type'));
      const read = readEnvelope(request, type, limits);
      const envelope = read instanceof Promise ? await read : read;
      const verification = verifySignature(envelope.data, envelope.signature, secrets, { algorithm });
      const secret = verified(verification instanceof Promise ? await verification : verification, algorithm);
      notification = notificationFromData(envelope.data);
      const key = keyFor(notification);
      const delivery: Delivery = {
        key,
        secretIndex: secret.index,
        secretId: secret.id,
        raw: notification.raw,
      };
      const handlers = routes.match(notification);
      if (handlers.length === 0) return accepted('ignored', notification);
      if (ordering?.isStale(notification)) {
        if (!options.onStale) return accepted('stale', notification);
        // Once per notification, as every handler: a stale copy redelivered, or one handled before it became stale,
        // is a duplicate.
        const stale = [{ id: 'onStale', run: options.onStale }];
        const outcome = await once.run({ key, routes: stale, notification, context, delivery });
        return accepted(outcome === 'duplicate' ? 'duplicate' : 'stale', notification);
      }
      const run = once.run({ key, routes: handlers, notification, context, delivery });
      const outcome = run instanceof Promise ? await run : run;
      if (outcome === 'handled') ordering?.record(notification);
      return accepted(outcome, notification);
    } catch (error) {
      const known = asWebhookError(error);
      report(known, request.remoteAddress);
      return refusal(known, notification);
    }
  }

  function checkMethodAndSender(request: WebhookRequest): void {
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
  }

  function keyFor(notification: Notification): string | undefined {
    const key = keyOf(notification);
    if (key !== undefined) return boundKey(key);
    if (logger) {
      logger.warn(
        `[@payhook/core] a ${notification.method} notification of payment ${notification.payment_id} carries nothing that tells it apart from another (a recurring charge without transaction_id or processed_at): it is handled without duplicate detection.`,
      );
    }
    return undefined;
  }

  function report(error: WebhookError, remoteAddress: string | undefined): void {
    if (options.onError) {
      try {
        options.onError(error, { remoteAddress });
      } catch {
        // A failing hook must not change the answer.
      }
    }
    if (!logger || error.status < 500) return;
    try {
      // What the application threw, with its stack; payhook's own causes (a store's error) likewise.
      if (error.cause instanceof Error) logger.error(`${error.message} (${error.code})`, error.cause);
      else logger.error(`${error.message} (${error.code})`);
    } catch {
      // A failing logger must not change the answer, nor crash the process from a background renewal.
    }
  }

  const answer = options.capture ? withCapture(handle, options.capture) : handle;
  const handler = answer as WebhookHandler<C>;
  handler.on = (event, fn) => {
    routes.add(event, fn as NotificationHandler<Notification, C>);
    return handler;
  };
  handler.onAny = (fn) => {
    routes.addAny(fn);
    return handler;
  };
  handler.fetch = async (request, context, remoteAddress) =>
    toResponse(
      await answer(
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

/** Node's timers take at most 2^31 - 1 ms; a longer wait would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A time option: a finite number of milliseconds from `min` (default 1) to about 24.8 days, or its default. */
function duration(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
    throw new TypeError(
      `[@payhook/core] ${name} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}, not ${String(value)}.`,
    );
  }
  return value;
}

/** A size or lifetime option: a positive finite number, or its default. */
function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`[@payhook/core] ${name} must be a positive number, not ${String(value)}.`);
  }
  return value;
}

function isStore(store: object): boolean {
  const s = store as Partial<DedupeStore & TransactionalStore>;
  if (typeof s.transaction === 'function') return true;
  return ['claim', 'renew', 'commit', 'release'].every(
    (method) => typeof (s as Record<string, unknown>)[method] === 'function',
  );
}

/**
 * The secrets to verify with, checked once (`checkSecretOption` names a missing or ill-typed one); a resolver is
 * wrapped to warn about whitespace in what it returns.
 */
function checkedSecrets(secret: Secrets, logger: Pick<Console, 'warn'> | false): Secrets {
  const warned = { done: false };
  const warn = (list: readonly Secret[]) => {
    if (warned.done || !logger) return;
    // Only what is a secret: anything else is refused by `checkSecret` after the resolver, as a TypeError (500).
    if (list.some((s) => secretText(s) !== secretText(s)?.trim())) {
      warned.done = true;
      logger.warn(
        '[@payhook/core] a webhook secret has leading or trailing whitespace; it is used as given. Trim it if it was copied with a newline.',
      );
    }
  };
  const checked = checkSecretOption(secret);
  if (typeof checked !== 'function') {
    warn(checked);
    return checked;
  }
  return async (posId) => {
    const found = await checked(posId);
    if (found !== undefined) warn(toSecretArray(found));
    return found;
  };
}

function secretText(secret: Secret): string | undefined {
  const text: unknown = typeof secret === 'string' ? secret : (secret as { secret?: unknown } | null)?.secret;
  return typeof text === 'string' ? text : undefined;
}
