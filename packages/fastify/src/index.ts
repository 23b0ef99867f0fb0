import type { Readable } from 'node:stream';
import {
  createMiddleware,
  type MiddlewareOptions,
  toWebhookRequest,
  type WebhookMiddleware,
} from '@payhook/core';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

// Everything core exports (error classes, types, MemoryStore, sign), so a user imports from one place, as the
// TanStack adapters re-export their core.
export * from '@payhook/core';

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

/** Every method Fastify 4 and 5 route with `all`: on the webhook's path, any but POST is core's 405. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/**
 * Fastify 4 and 5 plugin that receives the payment service's webhooks on one route, `POST path`. The route lives
 * in the plugin's own encapsulated context with one content-type parser for every type, which hands the body
 * stream on unread: the app's parsers (JSON, @fastify/formbody, …) keep every other route, and core reads the
 * bytes that were signed under its own `maxBodyBytes` and `readTimeoutMs` (Fastify's `bodyLimit` does not apply
 * to this route). Every decision is core's: it verifies, drops duplicates, runs the handlers with
 * `(notification, request, delivery)`, and answers with core's status and JSON reason, or, with `forwardErrors`,
 * throws refusals into Fastify's error handler (`err.statusCode`, `err.code`, as Fastify's default handler reads).
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
    const plugin: FastifyPluginAsync = async (scope) => {
      scope.removeAllContentTypeParsers();
      // Handing on the stream Fastify would parse (after the app's preParsing hooks) leaves it to core to read.
      scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      scope.route({
        method: METHODS,
        url,
        handler: async (request, reply) => {
          const stream = request.body as Readable | undefined;
          const result = await webhook(
            { ...toWebhookRequest(request.raw), stream: stream ?? request.raw },
            request,
          );
          if (forwardErrors && result.error) throw result.error;
          return reply.code(result.status).headers(result.headers).send(result.body);
        },
      });
    };
    // Encapsulated (its parser stays on its route), named, and refused with a clear message on Fastify 3.
    return fp(plugin, { name: '@payhook/fastify', fastify: '4.x || 5.x', encapsulate: true });
  });
}
