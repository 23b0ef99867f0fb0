// `@payhook/core/adapter`: the pieces a framework adapter is built from (@payhook/express and @payhook/koa are
// a screenful each). Applications receive webhooks with the main entry; the types these take and return
// (`WebhookHandler`, `WebhookRequest`, `WebhookResult`, `WebhookError`) are there too.
export { refusal } from './answers.js';
export type { MiddlewareOptions, PathMatcher, WebhookMiddleware } from './middleware.js';
export { createMiddleware } from './middleware.js';
export { sendNodeResponse, toWebhookRequest } from './node.js';
export { fromParserError } from './parser-error.js';
