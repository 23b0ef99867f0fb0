import type { Notification } from '../notification/types.js';
import type { Delivery } from './delivery.js';

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
