import {
  createWebhookHandler,
  type NotificationHandler,
  type WebhookHandler,
  type WebhookHandlerOptions,
} from './handler.js';
import type { Notification, NotificationEvent, NotificationFor } from './notification.js';

/**
 * A framework adapter's options: core's handler options, plus where refusals go.
 *
 * @example
 * const options: MiddlewareOptions<Request> = { secret: process.env.WEBHOOK_SECRET!, forwardErrors: true };
 */
export interface MiddlewareOptions<C> extends WebhookHandlerOptions<C> {
  /**
   * Hand each refusal (a `WebhookError` with `status`, `code` and `expose`) to the framework's error flow, Express
   * `next(err)` or a Koa throw, instead of answering it with core's status and JSON reason.
   * @default false
   */
  forwardErrors?: boolean;
}

/**
 * A framework middleware `M` that also routes notifications, like the core handler it wraps.
 *
 * @example
 * type ExpressWebhookMiddleware = WebhookMiddleware<RequestHandler, Request>;
 */
export type WebhookMiddleware<M, C> = M & {
  /** Adds a handler for a method (`purchase`), `recurring`, or either with a status (`refund.success`). */
  on<E extends NotificationEvent>(
    event: E,
    handler: NotificationHandler<NotificationFor<E>, C>,
  ): WebhookMiddleware<M, C>;
  /** Adds a handler for every notification. */
  onAny(handler: NotificationHandler<Notification, C>): WebhookMiddleware<M, C>;
  /** The core handler underneath, for `fetch` or direct calls. */
  readonly webhook: WebhookHandler<C>;
};

/**
 * Builds a framework adapter's middleware over one core handler: `translate` maps the framework's request and
 * response to the handler; the result gains the handler's `.on`/`.onAny` (chainable) and `.webhook`.
 *
 * @example
 * const middleware = createMiddleware<IncomingMessage, RequestListener>(options, (webhook) =>
 *   async (req, res) => sendNodeResponse(res, await webhook(toWebhookRequest(req), req)),
 * ).on('purchase.success', (payment) => fulfil(payment.order_id));
 */
export function createMiddleware<C, M extends object>(
  options: MiddlewareOptions<C>,
  translate: (webhook: WebhookHandler<C>, forwardErrors: boolean) => M,
): WebhookMiddleware<M, C> {
  const { forwardErrors = false, ...handlerOptions } = options;
  const webhook = createWebhookHandler<C>(handlerOptions);
  const middleware = translate(webhook, forwardErrors) as WebhookMiddleware<M, C>;
  return Object.assign(middleware, {
    on<E extends NotificationEvent>(event: E, handler: NotificationHandler<NotificationFor<E>, C>) {
      webhook.on(event, handler);
      return middleware;
    },
    onAny(handler: NotificationHandler<Notification, C>) {
      webhook.onAny(handler);
      return middleware;
    },
    webhook,
  });
}
