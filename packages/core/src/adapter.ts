// `@payhook/core/adapter`: the pieces a framework adapter is built from (@payhook/express and @payhook/koa are
// a screenful each). Applications receive webhooks with the main entry; the types these take and return
// (`WebhookHandler`, `WebhookRequest`, `WebhookResult`, `WebhookError`) are there too.
export { refusal } from './http/answers.js';
export type { MiddlewareOptions, PathMatcher, WebhookMiddleware } from './http/middleware.js';
export { createMiddleware } from './http/middleware.js';
export { sendNodeResponse, toWebhookRequest } from './http/node.js';
export { fromParserError } from './http/parser-error.js';
export { decodeBase64Url, encodeBase64Url } from './runtime/base64url.js';
export { Batcher } from './stores/batcher.js';
