import type { SignatureError, WebhookErrorCode } from '../errors.js';
import type { WebhookRequest } from '../handler.js';
import type { WebhookOutcome, WebhookResult } from '../http/answers.js';
import type { DriftFinding } from '../notification/drift.js';
import type { Notification } from '../notification/types.js';
import type { DeliveryFacts } from '../protocol/delivery.js';
import type { StoreStep } from '../protocol/store-calls.js';
import { builtinModule } from '../runtime/builtins.js';
import { isPromiseLike } from '../runtime/promise.js';
import type { SignatureHint } from '../verify/diagnosis.js';

/**
 * The `node:diagnostics_channel` names payhook publishes on: three `TracingChannel`s (subscribe with
 * `diagnostics_channel.tracingChannel(name).subscribe({ start, end, asyncStart, asyncEnd, error })`) and two plain
 * channels. Nothing is built or published while a channel has no subscriber.
 *
 * @example
 * import diagnostics_channel from 'node:diagnostics_channel';
 * diagnostics_channel.subscribe(PAYHOOK_CHANNELS.refusal, (message) => refusals.add(1, { code: message.code }));
 */
export const PAYHOOK_CHANNELS = {
  /** Tracing: one delivery (a request to the handler, or a call of `process`), from its start to its answer. */
  delivery: 'payhook:delivery',
  /** Tracing: one run of one application handler. */
  handler: 'payhook:handler',
  /** Tracing: one call of a duplicate store's method (claim, renew, commit, release, forget, transaction). */
  store: 'payhook:store',
  /** Plain: one refusal, with its code and status. */
  refusal: 'payhook:refusal',
  /** Plain: a verified delivery that carried what payhook does not type (new fields, statuses, types). */
  drift: 'payhook:drift',
  /** Plain: a payment the payment watch reported overdue (`createPaymentWatch`). */
  watch: 'payhook:watch',
} as const;

/**
 * The context of the `payhook:delivery` tracing channel: filled in as the delivery goes, complete at `asyncEnd`.
 * It never holds the notification, a secret, the signature or a payload field: only the duplicate key (made of
 * ids, method and status) and the secret's position and `id`.
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.delivery).subscribe({ asyncEnd: (m) => log((m as DeliveryMessage).outcome) });
 */
export interface DeliveryMessage {
  /** `request`: an HTTP delivery to the handler; `process`: a call of `webhook.process`. */
  readonly via: 'request' | 'process';
  /** `method.status` of the notification (`purchase.success`), once it is verified and parsed. */
  event: string | undefined;
  /** How it ended, at `asyncEnd`. */
  outcome: WebhookOutcome | undefined;
  /** The duplicate key as stored; `undefined` before parsing and when the notification is not deduplicated. */
  key: string | undefined;
  /** The position of the secret its signature matched; -1 when none was (a refusal, or `process` without one). */
  secretIndex: number;
  /** That secret's `id`, when secrets are named. */
  secretId: string | undefined;
  /** How many application handlers the notification reaches (0 when ignored or refused before routing). */
  handlerCount: number;
  /** The refusal's code, when refused. */
  errorCode: WebhookErrorCode | undefined;
  /** What most likely made its signature fail, when refused for it and payhook can tell (docs/errors.md). */
  hint: SignatureHint | undefined;
  /** The HTTP status answered (for `process`: the status the same outcome answers as a delivery). */
  status: number | undefined;
}

/**
 * The context of the `payhook:handler` tracing channel: one application handler's run.
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.handler).subscribe({ start: (m) => log((m as HandlerRunMessage).handler) });
 */
export interface HandlerRunMessage {
  /** The handler's id (`purchase.success#fulfil`, `*#audit`): its event and its function's name or position. */
  readonly handler: string;
  /** The notification's duplicate key. */
  readonly key: string | undefined;
  /** The delivery it runs for; `undefined` where the runtime has no `AsyncLocalStorage`. */
  readonly delivery: DeliveryMessage | undefined;
  /** `handler.failed` when it threw; what it threw is never published (it may hold anything). */
  errorCode: WebhookErrorCode | undefined;
  /** True at `end` when the handler returned without a promise: no `asyncStart` / `asyncEnd` follow. */
  settled: boolean;
}

/**
 * The context of the `payhook:store` tracing channel: one call of a duplicate store's method, from the call until
 * its result settles (a store that never answers leaves it open: the delivery answers `store.unavailable`).
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.store).subscribe({ error: (m) => alert((m as StoreCallMessage).store) });
 */
export interface StoreCallMessage {
  /** Which method: `claim`, `renew`, `commit`, `release`, `forget`, or a transactional store's `transaction`. */
  readonly step: StoreStep;
  /** The store's `name`. */
  readonly store: string;
  /** The delivery it serves; `undefined` for renewals (they run on a timer, for every run at once). */
  readonly delivery: DeliveryMessage | undefined;
  /** `store.unavailable` when the call threw or rejected; the store's error is never published. */
  errorCode: WebhookErrorCode | undefined;
  /** True at `end` when the store answered without a promise: no `asyncStart` / `asyncEnd` follow. */
  settled: boolean;
}

/**
 * A message of the `payhook:refusal` channel.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.refusal, (m) => counter.add(1, { code: (m as RefusalMessage).code }));
 */
export interface RefusalMessage {
  /** `request`: an HTTP delivery was answered with the refusal; `process`: `webhook.process` threw it. */
  readonly via: 'request' | 'process';
  /** The error code (docs/errors.md). */
  readonly code: WebhookErrorCode;
  /** The HTTP status it answers. */
  readonly status: number;
}

/**
 * A message of the `payhook:drift` channel: one per verified delivery that carried something payhook does not
 * type, with what it was. Names only (`findDrift`): never a field's value.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.drift, (m) => { for (const f of (m as DriftMessage).findings) seen.add(f.kind, f.name); });
 */
export interface DriftMessage {
  /** `method.status` of the notification, as sent (`purchase.success`, `purchase.rejected`). */
  readonly event: string;
  /** What it carried beyond payhook's types, in the order of its fields, then method, status and status code. */
  readonly findings: readonly DriftFinding[];
}

/**
 * A message of the `payhook:watch` channel: one per payment the watch reported overdue (still unsettled after its
 * tries, or an order the service does not know). No order id: a metric's attributes stay few.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.watch, (m) => overdue.add(1, { reason: (m as WatchMessage).reason }));
 */
export interface WatchMessage {
  readonly reason: 'unsettled' | 'unknown_order';
  /** The payment's operation (`purchase`, `auth`). */
  readonly operation: string;
  /** How many runs tried it. */
  readonly tries: number;
}

/** The parts of `node:diagnostics_channel` payhook uses, typed here so no runtime needs Node's types. */
interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
  runStores<T>(message: unknown, fn: () => T): T;
}
interface Tracing {
  readonly start: Channel;
  readonly end: Channel;
  readonly asyncStart: Channel;
  readonly asyncEnd: Channel;
  readonly error: Channel;
}
interface DiagnosticsChannel {
  channel(name: string): Channel;
  tracingChannel?(name: string): Tracing;
}
interface AsyncStorage<T> {
  run<R>(store: T, fn: () => R): R;
  getStore(): T | undefined;
}

interface Channels {
  readonly delivery: Tracing;
  readonly handler: Tracing;
  readonly store: Tracing;
  readonly refusal: Channel;
  readonly drift: Channel;
  readonly watch: Channel;
  readonly current: AsyncStorage<DeliveryMessage> | undefined;
}

let channels: Channels | undefined;

function build(dc: DiagnosticsChannel | undefined, hooks: { AsyncLocalStorage?: unknown } | undefined): void {
  if (!dc || typeof dc.tracingChannel !== 'function') return;
  const Storage = hooks?.AsyncLocalStorage as (new () => AsyncStorage<DeliveryMessage>) | undefined;
  channels = {
    delivery: dc.tracingChannel(PAYHOOK_CHANNELS.delivery),
    handler: dc.tracingChannel(PAYHOOK_CHANNELS.handler),
    store: dc.tracingChannel(PAYHOOK_CHANNELS.store),
    refusal: dc.channel(PAYHOOK_CHANNELS.refusal),
    drift: dc.channel(PAYHOOK_CHANNELS.drift),
    watch: dc.channel(PAYHOOK_CHANNELS.watch),
    current: typeof Storage === 'function' ? new Storage() : undefined,
  };
}

// Loaded through `builtinModule`: where the runtime has no `node:diagnostics_channel` (workerd without
// `nodejs_compat`, Node.js before 20.16), nothing is published.
build(
  builtinModule<DiagnosticsChannel>('node:diagnostics_channel'),
  builtinModule<{ AsyncLocalStorage?: unknown }>('node:async_hooks'),
);

function subscribed(tracing: Tracing): boolean {
  return (
    tracing.start.hasSubscribers ||
    tracing.end.hasSubscribers ||
    tracing.asyncEnd.hasSubscribers ||
    tracing.error.hasSubscribers
  );
}

/** A new delivery message when anyone listens on `payhook:delivery`, else `undefined` (nothing built). */
export function deliveryMessage(via: DeliveryMessage['via']): DeliveryMessage | undefined {
  if (channels === undefined || !subscribed(channels.delivery)) return undefined;
  return {
    via,
    event: undefined,
    outcome: undefined,
    key: undefined,
    secretIndex: -1,
    secretId: undefined,
    handlerCount: 0,
    errorCode: undefined,
    hint: undefined,
    status: undefined,
  };
}

/**
 * Runs one delivery as a traced operation: `start`, then `end` once `run` returned its promise, then `asyncStart`
 * and `asyncEnd` when it settled, with `error` before them when it was refused. `finish` fills in the message from
 * what `run` resolved or threw. Within `run`, handler runs and store calls know their delivery.
 */
export function traceDelivery<T>(
  message: DeliveryMessage,
  run: () => Promise<T>,
  finish: (message: DeliveryMessage, value: T | undefined, error: unknown) => void,
): Promise<T> {
  const tracing = channels!.delivery;
  const current = channels!.current;
  return tracing.start.runStores(message, () => {
    let pending: Promise<T>;
    try {
      pending = current ? current.run(message, run) : run();
    } catch (error) {
      pending = Promise.reject(error);
    }
    tracing.end.publish(message);
    return pending.then(
      (value) => {
        finish(message, value, undefined);
        settled(tracing, message, message.errorCode !== undefined);
        return value;
      },
      (error: unknown) => {
        finish(message, undefined, error);
        settled(tracing, message, true);
        throw error;
      },
    );
  });
}

function settled(tracing: Tracing, message: unknown, failed: boolean): void {
  if (failed) tracing.error.publish(message);
  tracing.asyncStart.publish(message);
  tracing.asyncEnd.publish(message);
}

/** What a traced delivery's message says of a verified notification: never the notification itself. */
export function describeDelivery(
  message: DeliveryMessage,
  notification: Notification,
  facts: DeliveryFacts,
  handlers: number,
): void {
  message.event = `${notification.method}.${notification.status}`;
  message.key = facts.key;
  message.secretIndex = facts.secretIndex;
  message.secretId = facts.secretId;
  message.handlerCount = handlers;
}

/** Publishes a refusal on `payhook:refusal` when anyone listens. */
export function publishRefusal(via: RefusalMessage['via'], code: WebhookErrorCode, status: number): void {
  if (channels === undefined || !channels.refusal.hasSubscribers) return;
  const message: RefusalMessage = { via, code, status };
  channels.refusal.publish(message);
}

/** Whether anyone listens on `payhook:drift`. */
export function driftSubscribed(): boolean {
  return channels?.drift.hasSubscribers === true;
}

/** Publishes a delivery's drift on `payhook:drift` (check `driftSubscribed` first). */
export function publishDrift(event: string, findings: readonly DriftFinding[]): void {
  const message: DriftMessage = { event, findings };
  channels?.drift.publish(message);
}

/** Publishes a payment reported overdue on `payhook:watch` when anyone listens. */
export function publishOverdue(message: WatchMessage): void {
  if (channels?.watch.hasSubscribers) channels.watch.publish(message);
}

/** The delivery being traced in this async context, if any. */
function currentDelivery(): DeliveryMessage | undefined {
  return channels?.current?.getStore();
}

/** Whether anyone listens on `payhook:handler`: without, a handler is called as it is (no closure to build). */
export function handlerTraced(): boolean {
  return channels !== undefined && subscribed(channels.handler);
}

/**
 * Calls an application handler (`call`), traced on `payhook:handler` (check `handlerTraced` first): its value or
 * promise unchanged, so a synchronous handler stays synchronous.
 */
export function traceHandler<T>(handler: string, key: string | undefined, call: () => T): T {
  if (channels === undefined) return call();
  const message: HandlerRunMessage = {
    handler,
    key,
    delivery: currentDelivery(),
    errorCode: undefined,
    settled: false,
  };
  return traced(channels.handler, message, 'handler.failed', call);
}

/**
 * Calls a store method (`call`): its value, its promise, or what it threw as a rejected promise; traced on `payhook:store`
 * when anyone listens.
 */
export function traceStoreCall<T>(
  step: StoreStep,
  store: string,
  call: () => T | PromiseLike<T>,
): T | PromiseLike<T> {
  if (channels === undefined || !subscribed(channels.store)) {
    try {
      return call();
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const delivery = step === 'renew' ? undefined : currentDelivery();
  const message: StoreCallMessage = { step, store, delivery, errorCode: undefined, settled: false };
  try {
    return traced(channels.store, message, 'store.unavailable', call);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** One traced call: its value as it is, or its promise with the trace's end when it settles. */
function traced<T, M extends { errorCode: WebhookErrorCode | undefined; settled: boolean }>(
  tracing: Tracing,
  message: M,
  code: WebhookErrorCode,
  call: () => T,
): T {
  return tracing.start.runStores(message, () => {
    let result: T;
    try {
      result = call();
    } catch (error) {
      message.errorCode = code;
      message.settled = true;
      tracing.error.publish(message);
      tracing.end.publish(message);
      throw error;
    }
    message.settled = !isPromiseLike(result);
    tracing.end.publish(message);
    if (message.settled) return result;
    return Promise.resolve(result as PromiseLike<unknown>).then(
      (value) => {
        settled(tracing, message, false);
        return value;
      },
      (error: unknown) => {
        message.errorCode = code;
        settled(tracing, message, true);
        throw error;
      },
    ) as T;
  });
}

/** `handle` traced on `payhook:delivery` when anyone listens. */
export function tracedDelivery<C>(
  handle: (request: WebhookRequest, context: C, traced?: DeliveryMessage) => Promise<WebhookResult>,
): (request: WebhookRequest, context: C) => Promise<WebhookResult> {
  return (request, context) => {
    const traced = deliveryMessage('request');
    if (traced === undefined) return handle(request, context);
    return traceDelivery(traced, () => handle(request, context, traced), finishDelivery);
  };
}

/** A traced delivery's message completed from its answer. */
function finishDelivery(message: DeliveryMessage, result: WebhookResult | undefined): void {
  message.outcome = result?.outcome;
  message.status = result?.status;
  message.errorCode = result?.error?.code;
  message.hint = (result?.error as SignatureError | undefined)?.hint;
}
