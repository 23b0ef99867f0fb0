import { handlerTraced, traceHandler } from '../diagnostics/channels.js';
import { HandlerError } from '../errors.js';
import type { WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import type { Delivery, DeliveryFacts } from './delivery.js';

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
}

/**
 * Which handlers a notification reaches, in the order they run: `method.status`, then `method`, then for a
 * notification carrying `recurring` (a subscription's first payment or a scheduled charge) `recurring.status` and
 * `recurring`, then every `onAny` (the `handle` option first); within one event, in the order they were added.
 */
export class Routes<C> {
  readonly #byEvent = new Map<string, Route<C>[]>();
  readonly #any: Route<C>[] = [];

  add(event: string, run: NotificationHandler<Notification, C>): void {
    const list = this.#byEvent.get(event) ?? [];
    list.push({ id: routeId(event, run, list), run });
    this.#byEvent.set(event, list);
  }

  addAny(run: NotificationHandler<Notification, C>): void {
    this.#any.push({ id: routeId('*', run, this.#any), run });
  }

  /** A new list each time: a handler added while a notification is handled waits for the next one. */
  match(notification: Notification): Route<C>[] {
    const found: Route<C>[] = [];
    const add = (event: string) => {
      const list = this.#byEvent.get(event);
      if (list) found.push(...list);
    };
    if (this.#byEvent.size > 0) {
      add(`${notification.method}.${notification.status}`);
      add(notification.method);
      if (notification.kind === 'primary' && notification.recurring !== undefined) {
        add(`recurring.${notification.status}`);
        add('recurring');
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

/** What a run comes to for its caller. */
export type Outcome = Extract<WebhookOutcome, 'handled' | 'duplicate'>;

/** A notification, the handlers it reaches in order, and what they are told: what a run runs. */
export interface Work<C> {
  /** The stored key; `undefined` handles it without duplicate detection. */
  readonly key: string | undefined;
  readonly handlers: readonly Route<C>[];
  readonly notification: Notification;
  readonly context: C;
  readonly delivery: DeliveryFacts;
  /** The caller's signal (a queue worker's): its abort aborts the handlers' `delivery.signal`. */
  readonly signal?: AbortSignal;
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

/** One handler called, traced on `payhook:handler` when anyone listens. */
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
