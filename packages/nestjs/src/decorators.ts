import type {
  HandlerOptions,
  Notification,
  NotificationEvent,
  NotificationFor,
  NotificationHandler,
} from '@payhook/core';
import type { NestWebhookContext } from './options.js';

/** Where a method's routes are kept (event `'*'` for every notification), read by the module at bootstrap. */
const NOTIFICATION_ROUTES: unique symbol = Symbol.for('@payhook/nestjs:routes');

const ANY = '*';

/** One decorator's route: the event (`'*'`: every notification) and core's per-handler options. */
interface MethodRoute {
  readonly event: string;
  readonly options: HandlerOptions | undefined;
}

/** A method decorator whose method must take what the event's notifications are. */
export type NotificationMethodDecorator<N extends Notification> = <
  M extends NotificationHandler<N, NestWebhookContext>,
>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

function addRoute(method: object, route: MethodRoute): void {
  const routes: MethodRoute[] = Reflect.getOwnMetadata(NOTIFICATION_ROUTES, method) ?? [];
  Reflect.defineMetadata(NOTIFICATION_ROUTES, [...routes, route], method);
}

/**
 * Runs the method for a method (`purchase`), `recurring`, or either with a status (`refund.success`), as core's
 * `.on(event, handler, options)`: with `(notification, req, delivery)`, once per notification, on the provider's (or
 * controller's) instance with whatever Nest injected into it. Stack it for several events. With the `queue` option,
 * `{ inline: true }` runs the method in the request and queues the other handlers once it committed.
 *
 * @example
 * @Injectable()
 * class Orders {
 *   constructor(@Inject(OrderRepository) private readonly repository: OrderRepository) {}
 *   @OnNotification('purchase.success')
 *   async fulfil(payment: PurchaseNotification) { await this.repository.fulfil(payment.order_id); }
 * }
 */
export function OnNotification<E extends NotificationEvent>(
  event: E,
  options?: HandlerOptions,
): NotificationMethodDecorator<NotificationFor<E>> {
  return (_target, _key, descriptor) => {
    if (typeof descriptor.value === 'function') addRoute(descriptor.value, { event, options });
  };
}

/**
 * Runs the method for every notification, as core's `.onAny(handler, options)`.
 *
 * @example
 * @OnAnyNotification()
 * audit(notification: Notification, _req: unknown, delivery: Delivery) { this.log.write(delivery.key); }
 */
export function OnAnyNotification(options?: HandlerOptions): NotificationMethodDecorator<Notification> {
  return (_target, _key, descriptor) => {
    if (typeof descriptor.value === 'function') addRoute(descriptor.value, { event: ANY, options });
  };
}

/** The routes a method was decorated with, event `'*'` standing for every notification. */
export function routesOf(method: unknown): MethodRoute[] {
  if (typeof method !== 'function') return [];
  return Reflect.getOwnMetadata(NOTIFICATION_ROUTES, method) ?? [];
}

export { ANY };
