// What a merchant uses to receive webhooks. Adapter-authoring helpers: `@payhook/core/adapter`; request and card
// validation for outgoing payments: `@payhook/core/validation`; stores: `@payhook/core/redis`, `/postgres`.
export { decodeBase64Url, encodeBase64Url } from './base64url.js';
export type { BodyStream, Envelope, HeaderBag } from './body.js';
export type { CapturedDelivery, CaptureOptions, DeliveryCapture } from './capture.js';
export { createCapture, DEFAULT_MASKED_FIELDS } from './capture.js';
export { deferContinue } from './continue.js';
export { decodeData } from './decode.js';
export type {
  ClaimResult,
  DedupeStore,
  KeyFunction,
  TransactionalStore,
  TransactionResult,
} from './dedupe.js';
export { notificationKey } from './dedupe.js';
export type {
  DeliveryMessage,
  HandlerRunMessage,
  RefusalMessage,
  StoreCallMessage,
} from './diagnostics.js';
export { PAYHOOK_CHANNELS } from './diagnostics.js';
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
export type {
  Delivery,
  ErrorHook,
  NotificationHandler,
  ProcessOptions,
  ProcessOutcome,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookOutcome,
  WebhookRequest,
  WebhookResult,
} from './handler.js';
export { createWebhookHandler } from './handler.js';
export { currencyExponent, toMinorUnits } from './money.js';
export { createNodeListener } from './node.js';
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
export type { NotificationQueue, QueuedNotification } from './queue.js';
export type { Secret, SecretList, SecretResolver, Secrets } from './secrets.js';
export type { SenderOptions } from './sender.js';
export { SERVICE_SENDER_ADDRESSES } from './sender.js';
export type {
  SignatureAlgorithm,
  SignatureOptions,
  VerifyResult,
} from './signature.js';
export { sign, verifySignature } from './signature.js';
export type { StoreStep } from './store-calls.js';
export type { MemoryStoreOptions } from './stores/memory.js';
export { MemoryStore } from './stores/memory.js';
export { parseTimestamp } from './time.js';
export type { NotificationInput } from './verify.js';
export { verifyNotification } from './verify.js';
