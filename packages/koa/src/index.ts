import type { WebhookResult } from '@payhook/core';
import {
  createMiddleware,
  fromParserError,
  type MiddlewareOptions,
  refusal,
  toWebhookRequest,
  type WebhookMiddleware,
} from '@payhook/core/adapter';
import type { DefaultContext, DefaultState, Middleware, Next, ParameterizedContext } from 'koa';

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
 * Core's handler options (see @payhook/core), plus `forwardErrors` and `path` (Koa has no mounting of its own: with
 * `path`, only requests to exactly that path are webhooks). Handlers receive the Koa `ctx`.
 *
 * @example
 * const options: KoaWebhookOptions<Context> = { secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' };
 */
export type KoaWebhookOptions<Ctx> = MiddlewareOptions<Ctx>;

/**
 * A Koa middleware that is also the webhook's router: `.on(event, handler)`, `.onAny(handler)`.
 *
 * @example
 * const webhooks: KoaWebhookMiddleware<Context> = webhookMiddleware({ secret }).on('refund', recordRefund);
 */
export type KoaWebhookMiddleware<Ctx> = WebhookMiddleware<(ctx: Ctx, next: Next) => Promise<void>, Ctx>;

/**
 * What body parsers leave on `ctx.request`: @koa/bodyparser keeps the text as `rawBody`; koa-body keeps `body`,
 * and with `includeUnparsed` the text under this symbol.
 */
interface ParsedRequest {
  body?: unknown;
  rawBody?: unknown;
}
const UNPARSED = Symbol.for('unparsedBody');

function bodyOf(request: ParsedRequest): unknown {
  const { body, rawBody } = request;
  if (rawBody !== undefined) return rawBody;
  const unparsed =
    body !== null && typeof body === 'object' ? (body as Record<symbol, unknown>)[UNPARSED] : undefined;
  return unparsed ?? body;
}

function answer(ctx: ParameterizedContext, result: WebhookResult): void {
  ctx.status = result.status;
  ctx.set(result.headers);
  ctx.body = result.body;
}

/**
 * Koa 2 and 3 middleware that receives the payment service's webhooks. Every decision is core's: it reads the
 * body whatever parser ran first (@koa/bodyparser, koa-body, or none: then `ctx.req` under the size limit),
 * verifies, drops duplicates, runs the handlers with `(notification, ctx, delivery)` where `ctx` keeps your own
 * state and context types, and answers with core's status and JSON reason, or, with `forwardErrors`, throws the
 * `WebhookError` (`status`, `expose`) into Koa's error flow.
 *
 * @example
 * app.use(webhookMiddleware<AppState>({ secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' })
 *   .on('purchase.success', async (payment, ctx) => ctx.state.orders.fulfil(payment.order_id)));
 */
export function webhookMiddleware<StateT = DefaultState, ContextT = DefaultContext>(
  options: KoaWebhookOptions<ParameterizedContext<StateT, ContextT>>,
): KoaWebhookMiddleware<ParameterizedContext<StateT, ContextT>> {
  type Ctx = ParameterizedContext<StateT, ContextT>;
  return createMiddleware<Ctx, (ctx: Ctx, next: Next) => Promise<void>>(
    options,
    (webhook, forwardErrors, handles) => async (ctx, next) => {
      if (!handles(ctx.path)) return next();
      const result = await webhook(toWebhookRequest(ctx.req, bodyOf(ctx.request as ParsedRequest)), ctx);
      if (forwardErrors && result.error) throw result.error;
      answer(ctx, result);
    },
  );
}

/**
 * A Koa middleware that answers a body parser's refusal of a webhook (too large, not JSON, unsupported charset)
 * the way payhook answers the same body: core's status, code and JSON reason. Put it on the webhook route before
 * the body parser; other errors are rethrown.
 *
 * @example
 * router.post('/webhooks', parserErrorHandler(), bodyParser({ jsonLimit: '100kb' }), webhookMiddleware({ secret }));
 */
export function parserErrorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const refused = fromParserError(error);
      if (!refused) throw error;
      answer(ctx, refusal(refused));
    }
  };
}
