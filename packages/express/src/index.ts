import {
  createMiddleware,
  fromParserError,
  type MiddlewareOptions,
  refusal,
  sendNodeResponse,
  toWebhookRequest,
  type WebhookMiddleware,
} from '@payhook/core/adapter';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';

export type {
  AuthNotification,
  CaptureNotification,
  CreditNotification,
  DedupeStore,
  Delivery,
  ErrorHook,
  KeyFunction,
  LookupNotification,
  Notification,
  NotificationEvent,
  NotificationFor,
  NotificationHandler,
  OtherNotification,
  P2pNotification,
  PrimaryNotification,
  PurchaseNotification,
  RecurringNotification,
  RefundNotification,
  SecondaryNotification,
  Secret,
  SecretResolver,
  Secrets,
  SignatureAlgorithm,
  TransactionalStore,
  VoidNotification,
  WebhookErrorCode,
  WebhookHandlerOptions,
  WebhookOutcome,
  WebhookResult,
} from '@payhook/core';
// What an application needs besides the middleware, so it imports from one place: the error classes, the
// notification types, the store contract, `MemoryStore` and `deferContinue`. Everything else is in @payhook/core.
export {
  deferContinue,
  HandlerError,
  isRecurring,
  MemoryStore,
  notificationKey,
  PayloadError,
  RequestError,
  SERVICE_SENDER_ADDRESSES,
  SignatureError,
  StoreError,
  WebhookError,
} from '@payhook/core';

/**
 * Core's handler options (see @payhook/core), plus `forwardErrors` and `path` (with `app.use(middleware)` at app
 * level, only that path is the webhook's). Handlers receive Express's `req`.
 *
 * @example
 * const options: ExpressWebhookOptions = { secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' };
 */
export type ExpressWebhookOptions = MiddlewareOptions<Request>;

/**
 * An Express middleware that is also the webhook's router: `.on(event, handler)`, `.onAny(handler)`.
 *
 * @example
 * const webhooks: ExpressWebhookMiddleware = webhookMiddleware({ secret }).on('refund', recordRefund);
 */
export type ExpressWebhookMiddleware = WebhookMiddleware<RequestHandler, Request>;

/**
 * Express 4 and 5 middleware that receives the payment service's webhooks. Every decision is core's: it reads the
 * body whatever parser ran first (raw, text, urlencoded, json, or none), verifies, drops duplicates, runs the
 * handlers with `(notification, req, delivery)`, and answers with core's status and JSON reason, or, with
 * `forwardErrors`, passes refusals to `next(err)` (`err.status`, `err.expose` as Express's final handler reads).
 * Mounted with `app.use(middleware)` at app level, give it `path`: without it every later route is the webhook's.
 *
 * @example
 * app.use(webhookMiddleware({ secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' })
 *   .on('purchase.success', async (payment, req) => fulfil(payment.order_id))
 *   .on('refund', async (refund) => recordRefund(refund.operation_id, refund.amount)));
 */
export function webhookMiddleware(options: ExpressWebhookOptions): ExpressWebhookMiddleware {
  return createMiddleware<Request, RequestHandler>(
    options,
    (webhook, forwardErrors, handles) => (req, res, next) => {
      if (!handles(req.path)) return next();
      webhook(toWebhookRequest(req, req.body), req)
        .then((result) => {
          if (forwardErrors && result.error) next(result.error);
          else sendNodeResponse(res, result);
        })
        .catch(next);
    },
  );
}

/**
 * An Express error handler that answers a body parser's refusal of a webhook (too large, not JSON, unsupported
 * charset) the way payhook answers the same body: core's status, code and JSON reason. Mount it on the webhook
 * path after the middleware; other errors go on to `next(err)`.
 *
 * @example
 * app.use(express.json({ limit: '100kb' }));
 * app.use('/webhooks', webhookMiddleware({ secret }), parserErrorHandler());
 */
export function parserErrorHandler(): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const refused = fromParserError(error);
    if (refused) sendNodeResponse(res, refusal(refused));
    else next(error);
  };
}
