import { handlerTraced, traceHandler } from '../diagnostics/channels.js';
import { HandlerError } from '../errors.js';
import type { WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import type { Caller, Delivery, DeliveryFacts, Within } from './delivery.js';
import { boundKey } from './key.js';
import { Run } from './run.js';

/**
 * The application's code for a notification. It runs once per notification; throw to have it redelivered.
 * `context` (the framework's request) is `undefined` where a handler runs without a request: in a queue worker
 * (unless its `context(job)` gives one) and for `process` and the reconciler (unless given one).
 */
export type NotificationHandler<N, C> = (
  notification: N,
  context: C | undefined,
  delivery: Delivery,
) => unknown;

/**
 * One registered handler. `id` names it in the store, so a redelivery after a partial failure knows which ones
 * already ran: its event and its function's name (`purchase.success#fulfil`, `*#audit` for `onAny`), or for an
 * anonymous function its position in that event (`purchase.success#0`). Names survive handlers being added or
 * reordered between deploys; positions do not.
 */
export interface Route<C> {
  readonly id: string;
  readonly run: NotificationHandler<Notification, C>;
  /** Registered `{ inline: true }`: with `queue`, it runs in the request instead of a worker. */
  readonly inline?: boolean;
}

/**
 * How a handler is registered.
 *
 * @example
 * webhook.on('purchase.success', markPaid, { inline: true }).on('purchase.success', sendReceipt);
 */
export interface HandlerOptions {
  /**
   * With the `queue` option: run this handler in the request (in the inbox's transaction with `PostgresInbox`), and
   * hand the notification's other handlers to the queue only once it committed. The answer is then 200
   * `handled+queued`. Without `queue` every handler runs in the request anyway.
   * @default false
   */
  inline?: boolean;
}

/** Which of a notification's handlers a run covers: all of them, those registered `inline`, or the others. */
export type Part = 'all' | 'inline' | 'queued';

export interface PartRun<C> {
  readonly handlers: readonly Route<C>[];
  readonly key: string | undefined;
  /** The queued handlers' run: each a step of its own (`Work.steps`). */
  readonly steps: boolean;
}

/**
 * The runs of `part` among `handlers`, in order. A notification reaching both inline and queued handlers is two runs
 * under two keys, wherever each runs: the inline ones under `key`, the queued ones under `key#queued`. One reaching
 * only one kind is one run under `key`, as without inline handlers.
 */
export function partRuns<C>(
  handlers: readonly Route<C>[],
  key: string | undefined,
  part: Part,
): PartRun<C>[] {
  const inline = handlers.filter((handler) => handler.inline);
  if (inline.length === 0 || inline.length === handlers.length) {
    const kind: Part = inline.length === 0 ? 'queued' : 'inline';
    return part === 'all' || part === kind ? [{ handlers, key, steps: kind === 'queued' }] : [];
  }
  const queued = {
    handlers: handlers.filter((handler) => !handler.inline),
    key: queuedKey(key),
    steps: true,
  };
  if (part === 'inline') return [{ handlers: inline, key, steps: false }];
  return part === 'queued' ? [queued] : [{ handlers: inline, key, steps: false }, queued];
}

function queuedKey(key: string | undefined): string | undefined {
  return key === undefined ? undefined : boundKey(`${key}#queued`);
}

/**
 * Which handlers a notification reaches, in the order they run: `method.status`, then `method`, then for a
 * notification carrying `recurring` (a subscription's first payment or a scheduled charge) `recurring.status` and
 * `recurring`, then every `onAny` (the `handle` option first); within one event, in the order they were added.
 */
export class Routes<C> {
  readonly #byEvent = new Map<string, Route<C>[]>();
  readonly #any: Route<C>[] = [];
  /** Whether any handler was registered `{ inline: true }` (only then a notification's handlers are split). */
  hasInline = false;

  add(event: string, run: NotificationHandler<Notification, C>, options?: HandlerOptions): void {
    const list = this.#byEvent.get(event) ?? [];
    list.push(this.#route(routeId(event, run, list), run, options));
    this.#byEvent.set(event, list);
  }

  addAny(run: NotificationHandler<Notification, C>, options?: HandlerOptions): void {
    this.#any.push(this.#route(routeId('*', run, this.#any), run, options));
  }

  #route(
    id: string,
    run: NotificationHandler<Notification, C>,
    options: HandlerOptions | undefined,
  ): Route<C> {
    if (options?.inline !== true) return { id, run };
    this.hasInline = true;
    return { id, run, inline: true };
  }

  /** A new list each time: a handler added while a notification is handled waits for the next one. */
  match(notification: Notification): Route<C>[] {
    const found: Route<C>[] = [];
    if (this.#byEvent.size > 0) {
      const { method, status } = notification;
      const recurring = notification.kind === 'primary' && notification.recurring !== undefined;
      const events = recurring
        ? [`${method}.${status}`, method, `recurring.${status}`, 'recurring']
        : [`${method}.${status}`, method];
      for (const event of events) {
        const list = this.#byEvent.get(event);
        if (list) found.push(...list);
      }
    }
    found.push(...this.#any);
    return found;
  }
}

function routeId<C>(
  event: string,
  run: NotificationHandler<Notification, C>,
  taken: readonly Route<C>[],
): string {
  const base = `${event}#${run.name || taken.length}`;
  let id = base;
  for (let n = 2; taken.some((route) => route.id === id); n++) id = `${base}#${n}`;
  return id;
}

export type Outcome = Extract<WebhookOutcome, 'handled' | 'duplicate'>;

/** A notification, the handlers it reaches in order, and what they are told: what a run runs. */
export interface Work<C> {
  /** The stored key; `undefined` handles it without duplicate detection. */
  readonly key: string | undefined;
  readonly handlers: readonly Route<C>[];
  readonly notification: Notification;
  readonly context: C | undefined;
  readonly delivery: DeliveryFacts;
  /** Where the caller's signal is (a queue worker's): its abort aborts the handlers' `delivery.signal`. */
  readonly caller?: Caller;
  /**
   * With a transactional store, run inside its transaction after the handlers (the transactional outbox: the queued
   * part's job, written by the transaction that commits the inline part).
   */
  readonly within?: Within;
  /**
   * The queued handlers (a worker's part): with a transactional store each runs in a transaction of its own under
   * `key#id`, its writes committed with its completion, so a retry or a replay runs only those that had not
   * succeeded; what they do outside the database (an e-mail) cannot be rolled back with the others.
   */
  readonly steps?: boolean;
}

/** Every handler of `work` in order; the first failure as `handler.failed`. */
export async function runAll<C>(work: Work<C>, delivery: Delivery): Promise<void> {
  for (const handler of work.handlers) await runHandler(handler, work, delivery);
}

export async function runHandler<C>(handler: Route<C>, work: Work<C>, delivery: Delivery): Promise<void> {
  try {
    await runRoute(handler, work, delivery);
  } catch (cause) {
    throw handlerFailed(cause);
  }
}

export function runRoute<C>(handler: Route<C>, work: Work<C>, delivery: Delivery): unknown {
  if (!handlerTraced()) return handler.run(work.notification, work.context, delivery);
  return traceHandler(handler.id, work.key, () => handler.run(work.notification, work.context, delivery));
}

/** The lone handler's promise, already started: its failure as `handler.failed`. */
export async function settledHandler(started: PromiseLike<unknown>): Promise<void> {
  try {
    await started;
  } catch (cause) {
    throw handlerFailed(cause);
  }
}

export function handlerFailed(cause: unknown): HandlerError {
  return new HandlerError(
    'handler.failed',
    'the application handler failed; the notification was not marked processed and will be handled when redelivered.',
    { cause },
  );
}

/**
 * What a handler of a run is told: the delivery facts, the run's signal, its transaction. A class, not an object
 * literal with a getter: V8 keeps it a fast object on the hot path. Its `Run` is made when first needed (the signal
 * read, or the handler's promise tracked): a synchronous handler that never reads it costs none.
 */
class RunDelivery implements Delivery {
  readonly key: string | undefined;
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  readonly raw: Readonly<Record<string, unknown>>;
  readonly transaction: unknown;
  #run: Run | undefined;
  readonly #caller: Caller | undefined;

  constructor(facts: DeliveryFacts, run: Run | undefined, transaction: unknown, caller?: Caller) {
    this.key = facts.key;
    this.secretIndex = facts.secretIndex;
    this.secretId = facts.secretId;
    this.raw = facts.raw;
    this.transaction = transaction;
    this.#run = run;
    this.#caller = caller;
  }

  get signal(): AbortSignal {
    return RunDelivery.runOf(this).signal;
  }

  static runOf(delivery: RunDelivery): Run {
    delivery.#run ??= new Run(delivery.key, delivery.#caller);
    return delivery.#run;
  }

  static stopRunOf(delivery: RunDelivery): void {
    delivery.#run?.stop();
  }
}

/** What a handler of `run` is told (`transaction`: a transactional store's). */
export function deliveryFor(facts: DeliveryFacts, run: Run, transaction?: unknown): Delivery {
  return new RunDelivery(facts, run, transaction);
}

/** What the lone handler of a run not yet made is told (`ExactlyOnce`'s synchronous path); `runOf` makes its run. */
export function lazyDelivery(facts: DeliveryFacts, caller: Caller | undefined): Delivery {
  return new RunDelivery(facts, undefined, undefined, caller);
}

/** The run of a delivery from `lazyDelivery`, made now unless its handler read its signal already. */
export function runOf(delivery: Delivery): Run {
  return RunDelivery.runOf(delivery as RunDelivery);
}

/** Stops the run of a delivery from `lazyDelivery` that ended untracked, if its handler made one (read its signal). */
export function stopRunOf(delivery: Delivery): void {
  RunDelivery.stopRunOf(delivery as RunDelivery);
}
