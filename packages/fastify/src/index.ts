import type { Readable } from 'node:stream';
import {
  createMiddleware,
  type MiddlewareOptions,
  toWebhookRequest,
  type WebhookMiddleware,
} from '@payhook/core/adapter';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import fp from 'fastify-plugin';

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
 * Core's handler options (see @payhook/core), plus `forwardErrors` and `path`: the webhook route's path, relative
 * to the `prefix` the plugin is registered with. Handlers receive Fastify's `request`.
 *
 * @example
 * const options: FastifyWebhookOptions = { secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' };
 */
export type FastifyWebhookOptions = MiddlewareOptions<FastifyRequest>;

/**
 * A Fastify plugin that is also the webhook's router: `.on(event, handler)`, `.onAny(handler)`.
 *
 * @example
 * const webhooks: FastifyWebhookPlugin = webhookPlugin({ secret }).on('refund', recordRefund);
 */
export type FastifyWebhookPlugin = WebhookMiddleware<FastifyPluginAsync, FastifyRequest>;

/** The common methods: on the webhook's path, any but POST is core's 405 (others are Fastify's 404). */
const METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/**
 * Fastify 4 and 5 plugin that receives the payment service's webhooks on one route, `POST path`. The route lives
 * in the plugin's own encapsulated context with one content-type parser for every type, which hands the body
 * stream on unread: the app's parsers (JSON, @fastify/formbody, …) keep every other route, and core reads the
 * bytes that were signed under its own `maxBodyBytes` and `readTimeoutMs` (Fastify's `bodyLimit` does not apply
 * to this route). Every decision is core's: it verifies, drops duplicates, runs the handlers with
 * `(notification, request, delivery)`, and answers with core's status and JSON reason, or, with `forwardErrors`,
 * throws refusals into Fastify's error handler (`err.status` and `err.code`, which its default handler answers).
 *
 * @example
 * await app.register(webhookPlugin({ secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' })
 *   .on('purchase.success', async (payment, request) => fulfil(payment.order_id))
 *   .on('refund', async (refund) => recordRefund(refund.operation_id, refund.amount)));
 */
export function webhookPlugin(options: FastifyWebhookOptions): FastifyWebhookPlugin {
  // The route matches the path (with the register prefix), so core's own path matching is not used; passing
  // `path` still gets it core's validation.
  const url = options.path ?? '/';
  return createMiddleware<FastifyRequest, FastifyPluginAsync>(options, (webhook, forwardErrors) => {
    const answer = async (request: FastifyRequest, reply: FastifyReply, stream: Readable | undefined) => {
      const result = await webhook(
        { ...toWebhookRequest(request.raw), stream: stream ?? request.raw },
        request,
      );
      if (forwardErrors && result.error) throw result.error;
      return reply.code(result.status).headers(result.headers).send(result.body);
    };
    const plugin: FastifyPluginAsync = async (scope) => {
      scope.removeAllContentTypeParsers();
      // Handing on the stream Fastify would parse (after the app's preParsing hooks) leaves it to core to read.
      scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      scope.route({
        method: METHODS,
        url,
        handler: (request, reply) => answer(request, reply, request.body as Readable | undefined),
      });
      // Fastify 5 refuses a Content-Type header it cannot parse before any parser runs: core answers it as it
      // answers any type it does not take. Other errors (and forwarded refusals) go on to the app's handler.
      scope.setErrorHandler((error, request, reply) => {
        if ((error as { code?: unknown }).code !== 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw error;
        return answer(request, reply, undefined);
      });
    };
    // Encapsulated (its parser stays on its route), named, and checked by Fastify against the versions it supports.
    return fp(plugin, { name: '@payhook/fastify', fastify: '4.x || 5.x', encapsulate: true });
  });
}
