import {
  type BodyStream,
  type Envelope,
  envelopeFromObject,
  getHeader,
  type HeaderBag,
  isConsumed,
  type MediaType,
  mediaTypeOf,
  parseRawBody,
  readStream,
  tooLarge,
} from './body.js';
import { decodeDataText, parseDataJson } from './decode.js';
import {
  type ClaimResult,
  type DedupeStore,
  isTransactionalStore,
  type KeyFunction,
  notificationKey,
  type TransactionalStore,
} from './dedupe.js';
import { HandlerError, RequestError, SignatureError, StoreError, WebhookError } from './errors.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification.js';
import { OrderingGuard, type OrderingOptions } from './ordering.js';
import { parseOwnNotification } from './parse.js';
import { createSenderCheck, type SenderOptions, senderAddress } from './sender.js';
import {
  checkSecretOption,
  matchSecret,
  normalizeSignature,
  resolveSecrets,
  type Secret,
  type Secrets,
  type SignatureAlgorithm,
} from './signature.js';
import { MemoryStore } from './stores/memory.js';

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

/** How the request ended. `refused` always carries `error`. */
export type WebhookOutcome = 'handled' | 'duplicate' | 'stale' | 'ignored' | 'refused';

/** What to answer: a status, headers and a short JSON body, plus what happened, for adapters and logs. */
export interface WebhookResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  outcome: WebhookOutcome;
  error?: WebhookError;
  notification?: Notification;
}

/** Facts about one delivery that the application handler may want. */
export interface Delivery {
  /** The duplicate-detection key. */
  readonly key: string;
  /** The position of the matching secret in the configured list (0 = current; more = an old one still in use). */
  readonly secretIndex: number;
  /** The matching secret's `id`, when secrets are named. */
  readonly secretId: string | undefined;
  /** The decoded object as sent, unknown fields included. */
  readonly raw: Readonly<Record<string, unknown>>;
  /** With a transactional store: its transaction (for `pg`, the client inside `BEGIN`). */
  readonly transaction?: unknown;
}

/** The handler's `Delivery`: `raw` comes from the notification, parsed only if the application reads it. */
class ReceivedDelivery implements Delivery {
  readonly key: string;
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  declare readonly transaction?: unknown;
  readonly #notification: Notification;

  constructor(
    key: string,
    secretIndex: number,
    secretId: string | undefined,
    notification: Notification,
    transaction?: unknown,
  ) {
    this.key = key;
    this.secretIndex = secretIndex;
    this.secretId = secretId;
    this.#notification = notification;
    if (transaction !== undefined) (this as { transaction?: unknown }).transaction = transaction;
  }

  get raw(): Readonly<Record<string, unknown>> {
    return this.#notification.raw;
  }
}

/** The application's code for a notification. It runs at most once per notification unless it throws. */
export type NotificationHandler<N, C> = (notification: N, context: C, delivery: Delivery) => unknown;

/** Receives every refusal and store failure, for metrics and logs. Never sees a secret or a payload. */
export type ErrorHook = (error: WebhookError, request: { remoteAddress: string | undefined }) => void;

export interface WebhookHandlerOptions<C = undefined> extends SenderOptions {
  /** The project's secret, several while rotating (current first), or a resolver by `pos_id`. */
  secret: Secrets;
  /** @default 'sha256' */
  algorithm?: SignatureAlgorithm;
  /** Called for every notification (as `onAny`). */
  handle?: NotificationHandler<Notification, C>;
  /**
   * Where processed notifications are remembered; `false` turns duplicate detection off.
   * @default new MemoryStore()
   */
  store?: DedupeStore | TransactionalStore | false;
  /** @default notificationKey */
  key?: KeyFunction;
  /**
   * How long a claim protects a notification in progress; a crashed process's claim expires after it.
   * @default 60_000
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
  /** Sees every refusal and store failure. */
  onError?: ErrorHook;
  /**
   * When the store fails: `false` answers 503 (the service retries, nothing is lost); `true` runs the handler
   * without duplicate detection.
   * @default false
   */
  failOpen?: boolean;
  /**
   * Where diagnostics go (a secret with surrounding whitespace, a store failure); `false` for none.
   * @default console
   */
  logger?: Pick<Console, 'warn' | 'error'> | false;
}

/** The framework-agnostic webhook handler: call it with a request, answer with the result. */
export interface WebhookHandler<C = undefined> {
  (request: WebhookRequest, context: C): Promise<WebhookResult>;
  /** Adds a handler for a method (`purchase`), `recurring`, or either with a status (`refund.success`). */
  on<E extends NotificationEvent>(
    event: E,
    handler: NotificationHandler<NotificationFor<E>, C>,
  ): WebhookHandler<C>;
  /** Adds a handler for every notification. */
  onAny(handler: NotificationHandler<Notification, C>): WebhookHandler<C>;
  /** The same handler for Fetch API runtimes: Next.js route handlers, Hono, Bun, Deno. */
  fetch(request: Request, context?: C, remoteAddress?: string): Promise<Response>;
  /** The options with their defaults, for adapters. */
  readonly options: Readonly<ResolvedOptions>;
}

interface ResolvedOptions {
  maxBodyBytes: number;
  readTimeoutMs: number;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;
const HANDLED_BODY = '{"ok":true,"outcome":"handled"}';
const DUPLICATE_BODY = '{"ok":true,"outcome":"duplicate"}';
const STALE_BODY = '{"ok":true,"outcome":"stale"}';
const IGNORED_BODY = '{"ok":true,"outcome":"ignored"}';
const IN_FLIGHT_DELAYS = [5, 10, 20, 40, 80, 160, 250];

/** The answer for a refusal: status from the error, a short JSON reason, and hints for the client. */
export function refusal(error: WebhookError): WebhookResult {
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (error.status === 405) headers.allow = 'POST';
  if (error.status === 408 || error.status === 413) headers.connection = 'close';
  if (error.status === 409 || error.status === 503) headers['retry-after'] = '1';
  return {
    status: error.status,
    headers,
    body: JSON.stringify({ ok: false, error: error.toJSON() }),
    outcome: 'refused',
    error,
  };
}

function success(
  outcome: 'handled' | 'duplicate' | 'stale' | 'ignored',
  notification: Notification,
): WebhookResult {
  const body =
    outcome === 'handled'
      ? HANDLED_BODY
      : outcome === 'duplicate'
        ? DUPLICATE_BODY
        : outcome === 'stale'
          ? STALE_BODY
          : IGNORED_BODY;
  return { status: 200, headers: { ...JSON_HEADERS }, body, outcome, notification };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isEmptyObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

function warnAboutWhitespace(
  secrets: readonly Secret[],
  logger: Pick<Console, 'warn'> | false,
  warned: { done: boolean },
) {
  if (warned.done || !logger) return;
  for (const secret of secrets) {
    const value = typeof secret === 'string' ? secret : secret.secret;
    if (value !== value.trim()) {
      warned.done = true;
      logger.warn(
        '[@payhook/core] a webhook secret has leading or trailing whitespace; it is used as given. Trim it if it was copied with a newline.',
      );
      return;
    }
  }
}

/**
 * Creates the webhook handler: checks method, sender, media type and size, verifies the signature in constant
 * time, decodes and parses the notification, drops duplicates, and calls the application's handlers. A
 * notification is marked processed only after its handlers succeeded; a failure answers 500 so the service
 * redelivers.
 *
 * @example
 * const webhook = createWebhookHandler({ secret: process.env.WEBHOOK_SECRET! })
 *   .on('purchase.success', async (payment) => fulfil(payment.order_id))
 *   .on('refund', async (refund) => recordRefund(refund.operation_id, refund.amount));
 * // node:http
 * http.createServer((req, res) => sendNodeResponse(res, await webhook(toWebhookRequest(req), undefined)));
 * // Fetch runtimes
 * export const POST = (request: Request) => webhook.fetch(request);
 */
export function createWebhookHandler<C = undefined>(options: WebhookHandlerOptions<C>): WebhookHandler<C> {
  const algorithm = options.algorithm ?? 'sha256';
  if (algorithm !== 'sha256' && algorithm !== 'sha1') {
    throw new TypeError(
      `[@payhook/core] algorithm must be 'sha256' or 'sha1', not ${JSON.stringify(algorithm)}.`,
    );
  }
  const logger = options.logger === undefined ? console : options.logger;
  const warned = { done: false };
  const secrets = checkSecretOption(options.secret);
  const resolver = typeof secrets === 'function' ? secrets : undefined;
  const staticSecrets = typeof secrets === 'function' ? [] : secrets;
  if (resolver === undefined) warnAboutWhitespace(staticSecrets, logger, warned);
  const store = options.store === false ? undefined : (options.store ?? new MemoryStore());
  const keyOf = options.key ?? notificationKey;
  const leaseMs = options.leaseMs ?? 60_000;
  const ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
  const inFlightWaitMs = options.inFlightWaitMs ?? 5_000;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const readTimeoutMs = options.readTimeoutMs ?? 10_000;
  const senderAllowed = options.allowedSenders ? createSenderCheck(options.allowedSenders) : undefined;
  const ordering = options.ordering
    ? new OrderingGuard(options.ordering === true ? undefined : options.ordering)
    : undefined;
  const routes = new Map<string, NotificationHandler<Notification, C>[]>();
  const anyHandlers: NotificationHandler<Notification, C>[] = options.handle ? [options.handle] : [];

  function report(error: WebhookError, remoteAddress: string | undefined): void {
    if (options.onError) {
      try {
        options.onError(error, { remoteAddress });
      } catch {
        // A failing hook must not change the answer.
      }
    }
    if (logger && error.status >= 500) logger.error(`${error.message} (${error.code})`);
  }

  // The envelope when the body is already there (raw bytes or a parsed object), else the bytes still to arrive.
  function readEnvelope(request: WebhookRequest, type: MediaType): Envelope | Promise<Buffer> {
    const length = getHeader(request.headers, 'content-length');
    if (length !== undefined && Number(length) > maxBodyBytes) throw tooLarge(maxBodyBytes);
    const body = request.body;
    if (typeof body === 'string' || body instanceof Uint8Array) {
      if (body.length > maxBodyBytes) throw tooLarge(maxBodyBytes);
      return parseRawBody(body, type);
    }
    if (body !== null && typeof body === 'object') {
      if (isStream(body)) return readStream(body, maxBodyBytes, readTimeoutMs);
      if (!isEmptyObject(body) || !request.stream || isConsumed(request.stream))
        return envelopeFromObject(body);
    }
    if (request.stream) {
      if (isConsumed(request.stream)) {
        throw new RequestError(
          'body.consumed',
          'the request body was already read by another middleware and nothing was kept: mount the webhook before body parsers, or keep the raw body (e.g. express.raw or a verify callback) and pass it as body.',
        );
      }
      return readStream(request.stream, maxBodyBytes, readTimeoutMs);
    }
    return envelopeFromObject({});
  }

  type Verified = { index: number; id: string | undefined };

  // Synchronous with static secrets; a promise only when a resolver picks them.
  function verify(envelope: Envelope): Verified | Promise<Verified> {
    const expected = normalizeSignature(envelope.signature, algorithm);
    if (expected === undefined) {
      throw new SignatureError(
        'signature.invalid',
        `the signature is not a ${algorithm} digest in base64url: check the algorithm option and that the field was not altered.`,
      );
    }
    if (!resolver) return match(envelope, expected, staticSecrets);
    return resolveSecrets(resolver, envelope.data).then((secrets) => {
      if (secrets.length === 0) {
        throw new SignatureError(
          'secret.not_found',
          'no secret is configured for the pos_id of this delivery.',
        );
      }
      warnAboutWhitespace(secrets, logger, warned);
      return match(envelope, expected, secrets);
    });
  }

  function match(envelope: Envelope, expected: string, secrets: readonly Secret[]): Verified {
    const index = matchSecret(envelope.data, expected, secrets, algorithm);
    if (index < 0) {
      throw new SignatureError(
        'signature.invalid',
        'the signature does not match the data under any configured secret: check the secret (test and live projects differ) and that data is passed exactly as received.',
      );
    }
    const secret = secrets[index]!;
    return { index, id: typeof secret === 'string' ? undefined : secret.id };
  }

  function handlersFor(notification: Notification): NotificationHandler<Notification, C>[] {
    if (routes.size === 0) return anyHandlers.slice();
    const found: NotificationHandler<Notification, C>[] = [];
    const add = (event: string) => {
      const list = routes.get(event);
      if (list) found.push(...list);
    };
    add(`${notification.method}.${notification.status}`);
    add(notification.method);
    if (notification.kind === 'primary' && notification.recurring !== undefined) {
      add(`recurring.${notification.status}`);
      add('recurring');
    }
    found.push(...anyHandlers);
    return found;
  }

  function handlerFailed(cause: unknown): HandlerError {
    return new HandlerError(
      'handler.failed',
      'the application handler failed; the notification was not marked processed and will be handled when redelivered.',
      { cause },
    );
  }

  // Synchronous while every handler is: a promise only from the first handler that returns one.
  function runHandlers(
    list: NotificationHandler<Notification, C>[],
    notification: Notification,
    context: C,
    delivery: Delivery,
  ): void | Promise<void> {
    for (let i = 0; i < list.length; i++) {
      let result: unknown;
      try {
        result = list[i]!(notification, context, delivery);
      } catch (cause) {
        throw handlerFailed(cause);
      }
      if (isPromiseLike(result)) return finishHandlers(result, list, i + 1, notification, context, delivery);
    }
  }

  async function finishHandlers(
    pending: PromiseLike<unknown>,
    list: NotificationHandler<Notification, C>[],
    from: number,
    notification: Notification,
    context: C,
    delivery: Delivery,
  ): Promise<void> {
    try {
      await pending;
      for (let i = from; i < list.length; i++) await list[i]!(notification, context, delivery);
    } catch (cause) {
      throw handlerFailed(cause);
    }
  }

  function storeFailure(cause: unknown): StoreError {
    return new StoreError(
      'store.unavailable',
      `the duplicate store (${store?.name ?? 'none'}) failed; nothing was marked processed, so the service's retry is safe.`,
      { cause },
    );
  }

  /** One notification on its way through the store and the handlers; each step returns a promise only if it must. */
  interface Job {
    list: NotificationHandler<Notification, C>[];
    notification: Notification;
    context: C;
    delivery: Delivery;
    remoteAddress: string | undefined;
  }

  function done(job: Job): WebhookResult {
    ordering?.record(job.notification);
    return success('handled', job.notification);
  }

  function runAndFinish(job: Job): WebhookResult | Promise<WebhookResult> {
    return then(runHandlers(job.list, job.notification, job.context, job.delivery), () => done(job));
  }

  /** The store failed before anything ran: 503, or with `failOpen` the handlers without duplicate detection. */
  function storeDown(job: Job, error: unknown): WebhookResult | Promise<WebhookResult> {
    if (!options.failOpen) throw storeFailure(error);
    report(storeFailure(error), job.remoteAddress);
    return runAndFinish(job);
  }

  function dispatch(job: Job): WebhookResult | Promise<WebhookResult> {
    const { list, notification } = job;
    if (list.length === 0) return success('ignored', notification);
    if (ordering?.isStale(notification)) {
      if (!options.onStale) return success('stale', notification);
      return then(runHandlers([options.onStale], notification, job.context, job.delivery), () =>
        success('stale', notification),
      );
    }
    if (store === undefined) return runAndFinish(job);
    if (isTransactionalStore(store)) return inTransaction(store, job);
    return claim(store, job, 0, 0);
  }

  async function inTransaction(store: TransactionalStore, job: Job): Promise<WebhookResult> {
    let outcome: Awaited<ReturnType<TransactionalStore['transaction']>>;
    try {
      outcome = await store.transaction(job.delivery.key, async (transaction) => {
        const { key, secretIndex, secretId } = job.delivery;
        const delivery = new ReceivedDelivery(key, secretIndex, secretId, job.notification, transaction);
        await runHandlers(job.list, job.notification, job.context, delivery);
      });
    } catch (error) {
      if (error instanceof HandlerError) throw error;
      return storeDown(job, error);
    }
    return outcome.status === 'duplicate' ? success('duplicate', job.notification) : done(job);
  }

  function claim(
    store: DedupeStore,
    job: Job,
    attempt: number,
    waited: number,
  ): WebhookResult | Promise<WebhookResult> {
    let claimed: ReturnType<DedupeStore['claim']>;
    try {
      claimed = store.claim(job.delivery.key, leaseMs);
    } catch (error) {
      return storeDown(job, error);
    }
    if (isPromiseLike(claimed)) {
      return claimed.then(
        (result) => afterClaim(store, job, result, attempt, waited),
        (error) => storeDown(job, error),
      );
    }
    return afterClaim(store, job, claimed, attempt, waited);
  }

  function afterClaim(
    store: DedupeStore,
    job: Job,
    claimed: ClaimResult,
    attempt: number,
    waited: number,
  ): WebhookResult | Promise<WebhookResult> {
    if (claimed.status === 'duplicate') return success('duplicate', job.notification);
    if (claimed.status === 'claimed') {
      const { token } = claimed;
      let ran: void | Promise<void>;
      try {
        ran = runHandlers(job.list, job.notification, job.context, job.delivery);
      } catch (error) {
        return release(store, job, token, error);
      }
      if (isPromiseLike(ran)) {
        return ran.then(
          () => commit(store, job, token),
          (error) => release(store, job, token, error),
        );
      }
      return commit(store, job, token);
    }
    const delay = IN_FLIGHT_DELAYS[Math.min(attempt, IN_FLIGHT_DELAYS.length - 1)]!;
    if (waited + delay > inFlightWaitMs) {
      throw new WebhookError(
        'notification.in_flight',
        'another copy of this notification is still being handled; retry later.',
      );
    }
    return sleep(delay).then(() => claim(store, job, attempt + 1, waited + delay));
  }

  /** After a handler failure: drop the lease so the redelivery is handled, then answer the failure. */
  function release(store: DedupeStore, job: Job, token: string, error: unknown): Promise<never> | never {
    let released: void | Promise<void>;
    try {
      released = store.release(job.delivery.key, token);
    } catch (releaseError) {
      report(storeFailure(releaseError), job.remoteAddress);
      throw error;
    }
    if (!isPromiseLike(released)) throw error;
    return released.then(
      () => Promise.reject(error),
      (releaseError) => {
        report(storeFailure(releaseError), job.remoteAddress);
        return Promise.reject(error);
      },
    );
  }

  function commit(store: DedupeStore, job: Job, token: string): WebhookResult | Promise<WebhookResult> {
    // The work is done: a failing commit must not make the service redeliver it. The lease still guards the key
    // until it expires.
    const failed = (error: unknown) => {
      report(storeFailure(error), job.remoteAddress);
      return done(job);
    };
    let committed: void | Promise<void>;
    try {
      committed = store.commit(job.delivery.key, token, ttlMs);
    } catch (error) {
      return failed(error);
    }
    return isPromiseLike(committed) ? committed.then(() => done(job), failed) : done(job);
  }

  function verified(envelope: Envelope, secret: Verified, request: WebhookRequest, context: C) {
    const json = decodeDataText(envelope.data);
    const notification = parseOwnNotification(parseDataJson(json), json);
    const delivery = new ReceivedDelivery(keyOf(notification), secret.index, secret.id, notification);
    const list = handlersFor(notification);
    return dispatch({ list, notification, context, delivery, remoteAddress: request.remoteAddress });
  }

  function received(envelope: Envelope, request: WebhookRequest, context: C) {
    return then(verify(envelope), (secret) => verified(envelope, secret, request, context));
  }

  /** The checks before the body is read; returns the body's media type. */
  function accept(request: WebhookRequest): MediaType {
    if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
      throw new RequestError(
        'request.method_not_allowed',
        `${request.method} is not accepted: webhooks are POSTed.`,
      );
    }
    if (
      senderAllowed &&
      !senderAllowed(senderAddress(request.headers, request.remoteAddress, options.trustProxy))
    ) {
      throw new RequestError('sender.forbidden', 'the sender address is not in allowedSenders.');
    }
    return mediaTypeOf(getHeader(request.headers, 'content-type'));
  }

  function refuse(error: unknown, remoteAddress: string | undefined): WebhookResult {
    const known =
      error instanceof WebhookError
        ? error
        : new HandlerError('handler.failed', 'an unexpected error stopped the webhook handler.', {
            cause: error,
          });
    report(known, remoteAddress);
    return refusal(known);
  }

  /** The result of `step`, any error it throws or rejects with answered as its refusal. */
  function settle(
    step: () => WebhookResult | Promise<WebhookResult>,
    remoteAddress: string | undefined,
  ): WebhookResult | Promise<WebhookResult> {
    try {
      const result = step();
      if (!isPromiseLike(result)) return result;
      return result.then(undefined, (error) => refuse(error, remoteAddress));
    } catch (error) {
      return refuse(error, remoteAddress);
    }
  }

  // Not async: a body already read, a synchronous store and synchronous handlers cost one resolved promise, and a
  // body read from a stream one more, with nothing chained between the read and the answer.
  function handle(request: WebhookRequest, context: C): Promise<WebhookResult> {
    const remoteAddress = request.remoteAddress;
    let type: MediaType;
    let read: Envelope | Promise<Buffer>;
    try {
      type = accept(request);
      read = readEnvelope(request, type);
    } catch (error) {
      return Promise.resolve(refuse(error, remoteAddress));
    }
    if (read instanceof Promise) {
      return read.then(
        (bytes) => settle(() => received(parseRawBody(bytes, type), request, context), remoteAddress),
        (error) => refuse(error, remoteAddress),
      );
    }
    const envelope = read;
    const result = settle(() => received(envelope, request, context), remoteAddress);
    return isPromiseLike(result) ? result : Promise.resolve(result);
  }

  const handler = handle as WebhookHandler<C>;
  handler.on = (event, fn) => {
    const list = routes.get(event) ?? [];
    list.push(fn as NotificationHandler<Notification, C>);
    routes.set(event, list);
    return handler;
  };
  handler.onAny = (fn) => {
    anyHandlers.push(fn);
    return handler;
  };
  handler.fetch = async (request, context, remoteAddress) => {
    const result = await handle(
      { method: request.method, headers: request.headers, stream: request.body ?? undefined, remoteAddress },
      context as C,
    );
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
  Object.defineProperty(handler, 'options', { value: Object.freeze({ maxBodyBytes, readTimeoutMs }) });
  return handler;
}

/** `fn(value)`, after `value` settles when it is a promise: synchronous steps stay synchronous. */
function then<T, R>(value: T | PromiseLike<T>, fn: (value: T) => R | Promise<R>): R | Promise<R> {
  return isPromiseLike(value) ? Promise.resolve(value).then(fn) : fn(value);
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<T>).then === 'function'
  );
}

function isStream(value: object): value is BodyStream {
  return (
    typeof (value as NodeJS.ReadableStream).pipe === 'function' ||
    typeof (value as ReadableStream).getReader === 'function' ||
    (typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' && !Array.isArray(value))
  );
}
