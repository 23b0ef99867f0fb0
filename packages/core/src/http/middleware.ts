import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createWebhookHandler,
  type HandlerOptions,
  type NotificationHandler,
  type WebhookHandler,
  type WebhookHandlerOptions,
} from '../handler.js';
import type { Notification, NotificationEvent, NotificationFor } from '../notification/types.js';
import type { WebhookResult } from './answers.js';
import type { WebhookRequest } from './request.js';

// The adapters' building blocks: `createMiddleware` over one core handler, and the Node.js request and response
// mapped to and from it (node:http, Express, Fastify's `reply.raw`).

/**
 * A framework adapter's options: core's handler options, plus where refusals go.
 *
 * @example
 * const options: MiddlewareOptions<Request> = { secret: process.env.WEBHOOK_SECRET!, forwardErrors: true };
 */
export interface MiddlewareOptions<C> extends WebhookHandlerOptions<C> {
  /** A middleware receives deliveries: it always verifies them (core's `secret`, required here). */
  secret: NonNullable<WebhookHandlerOptions<C>['secret']>;
  /**
   * Hand each refusal (a `WebhookError` with `status`, `code` and `expose`) to the framework's error flow, Express
   * `next(err)` or a Koa throw, instead of answering it with core's status and JSON reason.
   * @default false
   */
  forwardErrors?: boolean;
  /**
   * Only requests to exactly this path (without the query; Express's `req.path`, relative to where the middleware
   * is mounted, or Koa's `ctx.path`) are webhooks: any other goes on to `next()` untouched, so
   * `app.use(webhookMiddleware({ secret, path: '/webhooks' }))` leaves every other route alone. Any method on the
   * path is the webhook's: other than POST, 405 with `Allow: POST`. Leave it out where the framework routes to the
   * middleware already (`app.post('/webhooks', …)`, `app.use('/webhooks', …)`, a router route).
   * @default undefined (every request that reaches the middleware)
   */
  path?: string;
}

/** True for a request path the middleware handles (`path` left out: every one). */
export type PathMatcher = (requestPath: string) => boolean;

function pathMatcher(path: unknown): PathMatcher {
  if (path === undefined) return () => true;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(
      `[@payhook/core] path must be a string that starts with /, such as '/webhooks', not ${typeof path === 'string' ? JSON.stringify(path) : typeof path}.`,
    );
  }
  return (requestPath) => requestPath === path;
}

/**
 * A framework middleware `M` that also routes notifications, like the core handler it wraps.
 *
 * @example
 * type ExpressWebhookMiddleware = WebhookMiddleware<RequestHandler, Request>;
 */
export type WebhookMiddleware<M, C> = M & {
  /**
   * Adds a handler for a method (`purchase`), `recurring`, or either with a status (`refund.success`), with the core
   * handler's per-handler options (`{ inline: true }`).
   */
  on<E extends NotificationEvent>(
    event: E,
    handler: NotificationHandler<NotificationFor<E>, C>,
    options?: HandlerOptions,
  ): WebhookMiddleware<M, C>;
  /** Adds a handler for every notification, with the same options as `on`. */
  onAny(handler: NotificationHandler<Notification, C>, options?: HandlerOptions): WebhookMiddleware<M, C>;
  /** The core handler underneath, for `fetch` or direct calls. */
  readonly webhook: WebhookHandler<C>;
};

/**
 * Builds a framework adapter's middleware over one core handler: `translate` maps the framework's request and
 * response to the handler, passing on (to `next()`) a request whose path `handles` refuses; the result gains the
 * handler's `.on`/`.onAny` (chainable) and `.webhook`.
 *
 * @example
 * const middleware = createMiddleware<IncomingMessage, RequestListener>(options, (webhook, _forward, handles) =>
 *   async (req, res) => {
 *     if (!handles(new URL(req.url ?? '/', 'http://x').pathname)) return notFound(res);
 *     sendNodeResponse(res, await webhook(toWebhookRequest(req), req));
 *   },
 * ).on('purchase.success', (payment) => fulfil(payment.order_id));
 */
export function createMiddleware<C, M extends object>(
  options: MiddlewareOptions<C>,
  translate: (webhook: WebhookHandler<C>, forwardErrors: boolean, handles: PathMatcher) => M,
): WebhookMiddleware<M, C> {
  const { forwardErrors = false, path, ...handlerOptions } = options;
  const handles = pathMatcher(path);
  const webhook = createWebhookHandler<C>(handlerOptions);
  const middleware = translate(webhook, forwardErrors, handles) as WebhookMiddleware<M, C>;
  return Object.assign(middleware, {
    on<E extends NotificationEvent>(
      event: E,
      handler: NotificationHandler<NotificationFor<E>, C>,
      handlerOptions?: HandlerOptions,
    ) {
      webhook.on(event, handler, handlerOptions);
      return middleware;
    },
    onAny(handler: NotificationHandler<Notification, C>, handlerOptions?: HandlerOptions) {
      webhook.onAny(handler, handlerOptions);
      return middleware;
    },
    webhook,
  });
}

/**
 * Describes a Node.js request for the handler. `body` is whatever a framework already made of the body (raw
 * bytes, text, or a parsed object); without it, or when it is empty, the request stream itself is read.
 *
 * @example
 * const result = await webhook(toWebhookRequest(req, req.body), req);
 */
export function toWebhookRequest(request: IncomingMessage, body?: unknown): WebhookRequest {
  return {
    method: request.method,
    headers: request.headers,
    body,
    stream: request,
    remoteAddress: request.socket?.remoteAddress,
  };
}

/** Writes a handler result to a Node.js response (node:http, Express, Fastify's `reply.raw`). */
export function sendNodeResponse(response: ServerResponse, result: WebhookResult): void {
  // The length lets Node send head and body in one write; an object (not a flat list) keeps on-headers wrappers working.
  const headers: Record<string, string> = { 'content-length': String(Buffer.byteLength(result.body)) };
  for (const name in result.headers) headers[name] = result.headers[name]!;
  response.writeHead(result.status, headers);
  response.end(result.body);
}

/**
 * A `node:http` request listener over the handler: `http.createServer(createNodeListener(webhook))`. The
 * context passed to the application's handlers is the `IncomingMessage`.
 *
 * @example
 * const webhook = createWebhookHandler<IncomingMessage>({ secret, handle: (n) => console.log(n.status) });
 * http.createServer(createNodeListener(webhook)).listen(3000);
 */
export function createNodeListener(
  handler: WebhookHandler<IncomingMessage>,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return (request, response) =>
    handler(toWebhookRequest(request), request)
      .then((result) => sendNodeResponse(response, result))
      // The handler always answers; only writing the answer can throw (a response already sent by the app).
      .catch(() => void response.destroy());
}
