export { refusal } from './answers.js';
export { decodeBase64Url, encodeBase64Url } from './base64url.js';
export type { BodyStream, Envelope, HeaderBag } from './body.js';
export type { CardFields } from './card.js';
export { luhnCheck, validateCard } from './card.js';
export { decodeData } from './decode.js';
export type { ClaimResult, DedupeStore, KeyFunction, TransactionalStore } from './dedupe.js';
export { boundKey, isTransactionalStore, notificationKey } from './dedupe.js';
export type { WebhookErrorCode } from './errors.js';
export {
  ERROR_STATUS,
  HandlerError,
  PayloadError,
  RequestError,
  SignatureError,
  StoreError,
  WebhookError,
} from './errors.js';
export { isValidAmount } from './formats.js';
export type {
  Delivery,
  ErrorHook,
  NotificationHandler,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookOutcome,
  WebhookRequest,
  WebhookResult,
} from './handler.js';
export { createWebhookHandler } from './handler.js';
export type { MiddlewareOptions, WebhookMiddleware } from './middleware.js';
export { createMiddleware } from './middleware.js';
export { currencyExponent, toMinorUnits } from './money.js';
export { createNodeListener, sendNodeResponse, toWebhookRequest } from './node.js';
export type {
  AuthNotification,
  CaptureNotification,
  Commission,
  CreditNotification,
  KnownStatus,
  LimitInfo,
  LookupNotification,
  Method,
  Notification,
  NotificationByMethod,
  NotificationEvent,
  NotificationFor,
  OtherNotification,
  P2pNotification,
  PaymentDetails,
  PrimaryMethod,
  PrimaryNotification,
  PurchaseNotification,
  RecurringInfo,
  RecurringNotification,
  RefundNotification,
  SecondaryMethod,
  SecondaryNotification,
  Status,
  VoidNotification,
} from './notification.js';
export { isRecurring } from './notification.js';
export type { OrderingOptions } from './ordering.js';
export { parseNotification } from './parse.js';
export { fromParserError } from './parser-error.js';
export type {
  BrowserFingerprint,
  HostedRedirect,
  InitRecurring,
  IntervalUnit,
  OperationMethod,
  OperationRecord,
  Order3dsBypass,
  PaymentMethod,
  PaymentMode,
  PaymentRecord,
  PaymentRequest,
  PaymentResponse,
  Product,
  RecurringPaymentRecord,
  ResendRecurringWebhookRequest,
  ResendWebhookRequest,
  ResolvedInitRecurring,
  SplitItem,
  SplitPurchaseRequest,
} from './requests.js';
export type { SenderOptions } from './sender.js';
export { SERVICE_SENDER_ADDRESSES } from './sender.js';
export type {
  Secret,
  SecretList,
  SecretResolver,
  Secrets,
  SignatureAlgorithm,
  SignatureOptions,
  VerifyResult,
} from './signature.js';
export { sign, verifySignature } from './signature.js';
export type { MemoryStoreOptions } from './stores/memory.js';
export { MemoryStore } from './stores/memory.js';
export { parseTimestamp } from './time.js';
export { validatePaymentRequest } from './validate.js';
export { resolveInitRecurring, validateInitRecurring } from './validate-recurring.js';
export { validateSplitPurchaseRequest } from './validate-split.js';
export type { SplitSumRule, ValidationOptions, ValidationResult, Violation } from './violations.js';
