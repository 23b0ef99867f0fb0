import type { WebhookErrorCode } from '../errors.js';
import type { DriftFinding } from '../notification/drift.js';
import type { Notification } from '../notification/types.js';
import type { DeliveryFacts } from '../protocol/delivery.js';
import { builtinModule } from '../runtime/builtins.js';
import { isPromiseLike } from '../runtime/promise.js';
import {
  type DeliveryMessage,
  type DriftMessage,
  type HandlerRunMessage,
  type LedgerMessage,
  PAYHOOK_CHANNELS,
  type RefusalMessage,
  type StoreCallMessage,
  type StoreStep,
  type WatchMessage,
} from './messages.js';

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
  readonly ledger: Channel;
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
    ledger: dc.channel(PAYHOOK_CHANNELS.ledger),
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

export function publishRefusal(via: RefusalMessage['via'], code: WebhookErrorCode, status: number): void {
  if (channels === undefined || !channels.refusal.hasSubscribers) return;
  const message: RefusalMessage = { via, code, status };
  channels.refusal.publish(message);
}

export function driftSubscribed(): boolean {
  return channels?.drift.hasSubscribers === true;
}

export function publishDrift(event: string, findings: readonly DriftFinding[]): void {
  const message: DriftMessage = { event, findings };
  channels?.drift.publish(message);
}

/**
 * Publishes a payment watch's report on `payhook:watch` (for `@payhook/payments`' watch), only when someone listens.
 * @example publishOverdue({ reason: 'unsettled', operation: 'purchase', tries: 3 });
 */
export function publishOverdue(message: WatchMessage): void {
  if (channels?.watch.hasSubscribers) channels.watch.publish(message);
}

/** Publishes a ledger's stale or conflict decision on `payhook:ledger`, only when someone listens. */
export function publishLedger(outcome: LedgerMessage['outcome'], method: string): void {
  if (channels?.ledger.hasSubscribers) channels.ledger.publish({ outcome, method } satisfies LedgerMessage);
}

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
