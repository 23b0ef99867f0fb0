import type { DeliveryCapture } from './diagnostics/capture.js';
import type { ErrorHook, Logger } from './diagnostics/report.js';
import type { SenderOptions } from './http/sender.js';
import type { Notification } from './notification/types.js';
import {
  duration,
  flag,
  objectWith,
  optionalFunction,
  optionalStrings,
  optionError,
  positive,
} from './option-checks.js';
import type { ExactlyOnceOptions } from './protocol/exactly-once.js';
import { type KeyFunction, notificationKey } from './protocol/key.js';
import type { WebhookLedger } from './protocol/ledger.js';
import type { NotificationQueue } from './protocol/queue.js';
import type { NotificationHandler } from './protocol/routes.js';
import { chooseStore } from './stores/choice.js';
import type { DedupeStore, TransactionalStore } from './stores/contract.js';
import { type RelayCheck, type RelayTrustOptions, relayCheck } from './verify/relay-header.js';
import { type SecretSource, type Secrets, secretSource } from './verify/secrets.js';
import { checkAlgorithm, type SignatureAlgorithm } from './verify/signature.js';

// The handler's options resolved once, when it is built: every one checked (a wrong one throws a TypeError naming
// it, through option-checks.ts), defaults filled in.

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
  /**
   * Deliveries forwarded by `@payhook/relay` (`payhook relay connect`): with this channel's key, a delivery
   * carrying a valid `X-Payhook-Relay` header is checked by `allowedSenders` (and recorded by `capture`) with the
   * original sender the relay saw, not the client's address. The header must be signed with the key and name the
   * SHA-256 of the bytes received, or the delivery is refused 401 (`relay.header_invalid`,
   * `relay.signature_invalid`, `relay.body_mismatch`, `relay.header_stale`). A delivery without the header is
   * taken as a direct one (its socket or `trustProxy` address). The webhook's signature is verified either way.
   * @default none: the header is ignored
   */
  relay?: RelayTrustOptions;
}

export interface ResolvedOptions<C> {
  readonly algorithm: SignatureAlgorithm;
  readonly logger: Logger;
  /** Absent for a definition used only by queue workers (`process`), which verifies nothing. */
  readonly secrets: SecretSource | undefined;
  readonly limits: { readonly maxBodyBytes: number; readonly readTimeoutMs: number };
  readonly allowedSenders: readonly string[] | undefined;
  readonly trustProxy: boolean | number;
  readonly handle: NotificationHandler<Notification, C> | undefined;
  readonly onError: ErrorHook | undefined;
  readonly key: KeyFunction;
  /** The exactly-once protocol's options but `report`, which the handler builds from `onError` and `logger`. */
  readonly protocol: Omit<ExactlyOnceOptions, 'report'>;
  readonly ledger: WebhookLedger | undefined;
  readonly queue: NotificationQueue | undefined;
  readonly storeTimeoutMs: number;
  readonly capture: DeliveryCapture | undefined;
  readonly relay: RelayCheck | undefined;
}

/**
 * Every option of `createWebhookHandler` checked, with its default.
 *
 * @example
 * const { limits, protocol } = resolveOptions({ secret, maxBodyBytes: 65_536 });
 */
export function resolveOptions<C>(options: WebhookHandlerOptions<C>): ResolvedOptions<C> {
  const logger = checkedLogger(options.logger);
  const storeTimeoutMs = duration('storeTimeoutMs', options.storeTimeoutMs, 2_000);
  return {
    algorithm: checkAlgorithm(options.algorithm),
    logger,
    secrets:
      'secret' in options
        ? secretSource(options.secret, logger ? (message) => logger.warn(message) : undefined)
        : undefined,
    limits: {
      maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 1024 * 1024),
      readTimeoutMs: duration('readTimeoutMs', options.readTimeoutMs, 10_000),
    },
    allowedSenders: optionalStrings('allowedSenders', options.allowedSenders),
    trustProxy: checkedTrustProxy(options.trustProxy),
    handle: optionalFunction('handle', options.handle),
    onError: optionalFunction('onError', options.onError),
    key: optionalFunction('key', options.key) ?? notificationKey,
    protocol: {
      store: chooseStore(options.store, options.failOpen),
      leaseMs: duration('leaseMs', options.leaseMs, 15_000),
      ttlMs: positive('ttlMs', options.ttlMs, 7 * 24 * 60 * 60 * 1000),
      inFlightWaitMs: duration('inFlightWaitMs', options.inFlightWaitMs, 5_000, 0),
      handlerTimeoutMs: duration('handlerTimeoutMs', options.handlerTimeoutMs, 20_000),
      storeTimeoutMs,
      failOpen: flag('failOpen', options.failOpen, false),
    },
    ledger:
      options.ledger === undefined
        ? undefined
        : objectWith<WebhookLedger>('ledger', options.ledger, ['record'], LEDGER),
    queue:
      options.queue === undefined
        ? undefined
        : objectWith<NotificationQueue>('queue', options.queue, ['enqueue'], QUEUE),
    storeTimeoutMs,
    capture:
      options.capture === undefined
        ? undefined
        : objectWith<DeliveryCapture>('capture', options.capture, ['record'], CAPTURE),
    relay: relayCheck(options.relay),
  };
}

const LEDGER = 'a WebhookLedger (an object with record, as createPaymentLedger of @payhook/payments builds)';
const QUEUE = 'a NotificationQueue (an object with enqueue, as @payhook/queue builds)';
const CAPTURE = 'made by createCapture({ path | write, … })';

function checkedLogger(logger: unknown): Logger {
  if (logger === undefined) return console;
  if (logger === false) return false;
  return objectWith<Pick<Console, 'warn' | 'error'>>(
    'logger',
    logger,
    ['warn', 'error'],
    'false or an object with warn and error, such as console',
  );
}

function checkedTrustProxy(trustProxy: unknown): boolean | number {
  if (trustProxy === undefined || typeof trustProxy === 'boolean') return trustProxy ?? false;
  if (!Number.isSafeInteger(trustProxy) || (trustProxy as number) < 0) {
    throw optionError('trustProxy', 'true, false or a number of proxies', trustProxy);
  }
  return trustProxy as number;
}
