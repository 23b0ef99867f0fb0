import type { DeliveryCapture } from './diagnostics/capture.js';
import type { ErrorHook, WebhookHandlerOptions } from './handler.js';
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
import { type DedupeStore, isTransactionalStore, type TransactionalStore } from './stores/contract.js';
import { MemoryStore } from './stores/memory.js';
import { type SecretSource, secretSource } from './verify/secrets.js';
import { checkAlgorithm, type SignatureAlgorithm } from './verify/signature.js';

// The handler's options resolved once, when it is built: every one checked (a wrong one throws a TypeError naming
// it, through option-checks.ts), defaults filled in.

export type Logger = Pick<Console, 'warn' | 'error'> | false;

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
      store: checkedStore(options as WebhookHandlerOptions<never>),
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
  };
}

const LEDGER = 'a WebhookLedger (an object with record, as createPaymentLedger of @payhook/payments builds)';
const QUEUE = 'a NotificationQueue (an object with enqueue, as @payhook/queue builds)';
const CAPTURE = 'made by createCapture({ path | write, … })';
const STORE = 'a DedupeStore (claim, renew, commit and release), a TransactionalStore (transaction) or false';

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

/** The `store` option: the default `MemoryStore`, none (`false`), or one with the methods of a store contract. */
function checkedStore(options: WebhookHandlerOptions<never>): DedupeStore | TransactionalStore | undefined {
  if (options.store === false) return undefined;
  const store = options.store ?? new MemoryStore();
  if (!isStore(store)) throw optionError('store', STORE, store);
  if (isTransactionalStore(store) && options.failOpen) {
    throw new TypeError(
      '[@payhook/core] failOpen cannot be used with a transactional store: handlers would run without the transaction their writes need (inbox.client(delivery)).',
    );
  }
  return store;
}

function isStore(store: unknown): boolean {
  if (typeof store !== 'object' || store === null) return false;
  const s = store as Record<string, unknown>;
  if (typeof s.transaction === 'function') return true;
  return ['claim', 'renew', 'commit', 'release'].every((method) => typeof s[method] === 'function');
}
