// `@payhook/core/adapter`: the pieces a framework adapter is built from (@payhook/express and @payhook/koa are
// a screenful each), and the small helpers the packages built on core share (@payhook/payments: option checks,
// `isMissing`, deadlines, the HMAC request signature). Applications receive webhooks with the main entry; the types
// these take and return (`WebhookHandler`, `WebhookRequest`, `WebhookResult`, `WebhookError`) are there too.

export { printable } from './diagnostics/printable.js';
export { refusal } from './http/answers.js';
export type { MiddlewareOptions, PathMatcher, WebhookMiddleware } from './http/middleware.js';
export { createMiddleware, sendNodeResponse, toWebhookRequest } from './http/middleware.js';
export { fromParserError } from './http/parser-error.js';
export { createSenderCheck, senderAddress } from './http/sender.js';
export { CUSTOMER_FIELDS } from './notification/customer-fields.js';
export { withoutTrailingZeros } from './notification/money.js';
export { isMissing } from './notification/parse.js';
export type { OptionChecks } from './option-checks.js';
export {
  createOptionChecks,
  duration,
  nonEmptyString,
  objectWith,
  optionalFunction,
  optionError,
  positive,
  positiveInteger,
} from './option-checks.js';
export { decodeBase64Url, encodeBase64Url } from './runtime/bytes.js';
export { Timeout, withDeadline } from './runtime/deadline.js';
export { hmacSha256Hex } from './runtime/hmac.js';
export { Batcher } from './stores/batcher.js';
export type { RelayForward } from './verify/relay-header.js';
export {
  RELAY_HEADER,
  relayHeaderValue,
  relaySignedText,
  verifyRelayForward,
} from './verify/relay-header.js';
