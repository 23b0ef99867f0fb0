import {
  type BodyStream,
  type Envelope,
  envelopeFromObject,
  getHeader,
  type HeaderBag,
  isConsumed,
  mediaTypeOf,
  parseRawBody,
  readStream,
  tooLarge,
} from './body.js';
import { decodeData } from './decode.js';
import {
  type DedupeStore,
  isTransactionalStore,
  type KeyFunction,
  notificationKey,
  type TransactionalStore,
} from './dedupe.js';
import { HandlerError, RequestError, SignatureError, StoreError, WebhookError } from './errors.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification.js';
import { OrderingGuard, type OrderingOptions } from './ordering.js';
import { parseNotification } from './parse.js';
import { createSenderCheck, type SenderOptions, senderAddress } from './sender.js';
import {
  decodeSignature,
  matchSecret,
  resolveSecrets,
  type Secret,
  type SecretResolver,
  type Secrets,
  type SignatureAlgorithm,
  toSecretArray,
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
  const resolver = typeof options.secret === 'function' ? options.secret : undefined;
  const staticSecrets =
    resolver === undefined ? toSecretArray(options.secret as Exclude<Secrets, SecretResolver>) : [];
  if (resolver === undefined) {
    if (
      staticSecrets.length === 0 ||
      staticSecrets.some((s) => (typeof s === 'string' ? s : s.secret) === '')
    ) {
      throw new TypeError(
        '[@payhook/core] secret is empty: pass the project secret (SECRET_KEY) from your settings.',
      );
    }
    warnAboutWhitespace(staticSecrets, logger, warned);
  }
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

  // Synchronous when the body is already there (raw bytes or a parsed object): no promise per request.
  function readEnvelope(request: WebhookRequest): Envelope | Promise<Envelope> {
    const type = mediaTypeOf(getHeader(request.headers, 'content-type'));
    const length = getHeader(request.headers, 'content-length');
    if (length !== undefined && Number(length) > maxBodyBytes) throw tooLarge(maxBodyBytes);
    const body = request.body;
    if (typeof body === 'string' || body instanceof Uint8Array) {
      if (body.length > maxBodyBytes) throw tooLarge(maxBodyBytes);
      return parseRawBody(body, type);
    }
    if (body !== null && typeof body === 'object') {
      if (isStream(body)) {
        return readStream(body, maxBodyBytes, readTimeoutMs).then((bytes) => parseRawBody(bytes, type));
      }
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
      return readStream(request.stream, maxBodyBytes, readTimeoutMs).then((bytes) =>
        parseRawBody(bytes, type),
      );
    }
    return envelopeFromObject({});
  }

  type Verified = { index: number; id: string | undefined };

  // Synchronous with static secrets; a promise only when a resolver picks them.
  function verify(envelope: Envelope): Verified | Promise<Verified> {
    const expected = decodeSignature(envelope.signature, algorithm);
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

  function match(envelope: Envelope, expected: Buffer, secrets: readonly Secret[]): Verified {
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

  async function runHandlers(
    list: NotificationHandler<Notification, C>[],
    notification: Notification,
    context: C,
    delivery: Delivery,
  ): Promise<void> {
    try {
      for (const fn of list) {
        const result = fn(notification, context, delivery);
        if (isPromiseLike(result)) await result;
      }
    } catch (cause) {
      throw new HandlerError(
        'handler.failed',
        'the application handler failed; the notification was not marked processed and will be handled when redelivered.',
        { cause },
      );
    }
  }

  function storeFailure(cause: unknown): StoreError {
    return new StoreError(
      'store.unavailable',
      `the duplicate store (${store?.name ?? 'none'}) failed; nothing was marked processed, so the service's retry is safe.`,
      { cause },
    );
  }

  async function dispatch(
    notification: Notification,
    context: C,
    delivery: Delivery,
    remoteAddress: string | undefined,
  ): Promise<WebhookResult> {
    const list = handlersFor(notification);
    if (list.length === 0) return success('ignored', notification);
    if (ordering?.isStale(notification)) {
      if (options.onStale) await runHandlers([options.onStale], notification, context, delivery);
      return success('stale', notification);
    }
    const done = () => {
      ordering?.record(notification);
      return success('handled', notification);
    };
    if (store === undefined) {
      await runHandlers(list, notification, context, delivery);
      return done();
    }
    if (isTransactionalStore(store)) {
      let outcome: Awaited<ReturnType<TransactionalStore['transaction']>>;
      try {
        outcome = await store.transaction(delivery.key, (transaction) =>
          runHandlers(list, notification, context, { ...delivery, transaction }),
        );
      } catch (error) {
        if (error instanceof HandlerError) throw error;
        if (!options.failOpen) throw storeFailure(error);
        report(storeFailure(error), remoteAddress);
        await runHandlers(list, notification, context, delivery);
        return done();
      }
      return outcome.status === 'duplicate' ? success('duplicate', notification) : done();
    }

    let waited = 0;
    for (let attempt = 0; ; attempt++) {
      let claim: ReturnType<DedupeStore['claim']>;
      try {
        claim = store.claim(delivery.key, leaseMs);
        if (isPromiseLike(claim)) claim = await claim;
      } catch (error) {
        if (!options.failOpen) throw storeFailure(error);
        report(storeFailure(error), remoteAddress);
        await runHandlers(list, notification, context, delivery);
        return done();
      }
      if (claim.status === 'duplicate') return success('duplicate', notification);
      if (claim.status === 'claimed') {
        try {
          await runHandlers(list, notification, context, delivery);
        } catch (error) {
          try {
            await store.release(delivery.key, claim.token);
          } catch (releaseError) {
            report(storeFailure(releaseError), remoteAddress);
          }
          throw error;
        }
        try {
          const committed = store.commit(delivery.key, claim.token, ttlMs);
          if (isPromiseLike(committed)) await committed;
        } catch (error) {
          // The work is done: answering an error would make the service redeliver it. The lease still guards
          // the key until it expires.
          report(storeFailure(error), remoteAddress);
        }
        return done();
      }
      const delay = IN_FLIGHT_DELAYS[Math.min(attempt, IN_FLIGHT_DELAYS.length - 1)]!;
      if (waited + delay > inFlightWaitMs) {
        throw new WebhookError(
          'notification.in_flight',
          'another copy of this notification is still being handled; retry later.',
        );
      }
      await sleep(delay);
      waited += delay;
    }
  }

  async function handle(request: WebhookRequest, context: C): Promise<WebhookResult> {
    const remoteAddress = request.remoteAddress;
    try {
      if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
        throw new RequestError(
          'request.method_not_allowed',
          `${request.method} is not accepted: webhooks are POSTed.`,
        );
      }
      if (
        senderAllowed &&
        !senderAllowed(senderAddress(request.headers, remoteAddress, options.trustProxy))
      ) {
        throw new RequestError('sender.forbidden', 'the sender address is not in allowedSenders.');
      }
      const read = readEnvelope(request);
      const envelope = isPromiseLike(read) ? await read : read;
      const verified = verify(envelope);
      const secret = isPromiseLike(verified) ? await verified : verified;
      const raw = decodeData(envelope.data);
      const notification = parseNotification(raw);
      const delivery: Delivery = {
        key: keyOf(notification),
        secretIndex: secret.index,
        secretId: secret.id,
        raw,
      };
      return await dispatch(notification, context, delivery, remoteAddress);
    } catch (error) {
      const known =
        error instanceof WebhookError
          ? error
          : new HandlerError('handler.failed', 'an unexpected error stopped the webhook handler.', {
              cause: error,
            });
      report(known, remoteAddress);
      return refusal(known);
    }
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
