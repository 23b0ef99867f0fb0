import type { Notification, NotificationEvent, NotificationFor, NotificationHandler } from '@payhook/core';
import type { NestWebhookContext } from './options.js';

/** Where a method's events are kept (a `'*'` for every notification), read by the module at bootstrap. */
const NOTIFICATION_EVENTS: unique symbol = Symbol.for('@payhook/nestjs:events');

const ANY = '*';

/** A method decorator whose method must take what the event's notifications are. */
export type NotificationMethodDecorator<N extends Notification> = <
  M extends NotificationHandler<N, NestWebhookContext>,
>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

function addEvent(method: object, event: string): void {
  const events: string[] = Reflect.getOwnMetadata(NOTIFICATION_EVENTS, method) ?? [];
  Reflect.defineMetadata(NOTIFICATION_EVENTS, [...events, event], method);
}

/**
 * Runs the method for a method (`purchase`), `recurring`, or either with a status (`refund.success`), as core's
 * `.on(event, handler)`: with `(notification, req, delivery)`, once per notification, on the provider's (or
 * controller's) instance with whatever Nest injected into it. Stack it for several events.
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
): NotificationMethodDecorator<NotificationFor<E>> {
  return (_target, _key, descriptor) => {
    if (typeof descriptor.value === 'function') addEvent(descriptor.value, event);
  };
}

/**
 * Runs the method for every notification, as core's `.onAny(handler)`.
 *
 * @example
 * @OnAnyNotification()
 * audit(notification: Notification, _req: unknown, delivery: Delivery) { this.log.write(delivery.key); }
 */
export function OnAnyNotification(): NotificationMethodDecorator<Notification> {
  return (_target, _key, descriptor) => {
    if (typeof descriptor.value === 'function') addEvent(descriptor.value, ANY);
  };
}

/** The events a method was decorated for, `'*'` standing for every one. */
export function eventsOf(method: unknown): string[] {
  if (typeof method !== 'function') return [];
  return Reflect.getOwnMetadata(NOTIFICATION_EVENTS, method) ?? [];
}

export { ANY };
