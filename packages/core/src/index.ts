// What a merchant uses to receive webhooks. Adapter-authoring helpers (and base64url): `@payhook/core/adapter`;
// stores: `@payhook/core/redis`, `/postgres`; delivery capture: `/capture`; diagnostics channels: `/diagnostics`.
// Sending and following payments (the API client, reconciliation, validation) is `@payhook/payments`.

export type { SignatureHint, WebhookErrorCode } from './errors.js';
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
  HandlerOptions,
  NotificationHandler,
  ProcessOptions,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookOutcome,
  WebhookRequest,
  WebhookResult,
} from './handler.js';
export { createWebhookHandler } from './handler.js';
export { deferContinue } from './http/continue.js';
export { createNodeListener } from './http/middleware.js';
export type { BodyStream, Envelope, HeaderBag } from './http/request.js';
export type { SenderOptions } from './http/sender.js';
export { SERVICE_SENDER_ADDRESSES } from './http/sender.js';
export type { DriftFinding, DriftKind, JsonType } from './notification/drift.js';
export { findDrift } from './notification/drift.js';
export { currencyExponent, toMinorUnits } from './notification/money.js';
export { decodeData, parseNotification } from './notification/parse.js';
export { parseTimestamp } from './notification/time.js';
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
} from './notification/types.js';
export { isRecurring } from './notification/types.js';
export type { KeyFunction } from './protocol/key.js';
export { notificationKey } from './protocol/key.js';
export type { LedgerDecision, WebhookLedger } from './protocol/ledger.js';
export type { NotificationQueue, QueuedNotification } from './protocol/queue.js';
export type { StoreStep } from './protocol/store-calls.js';
export type { ClaimResult, DedupeStore, TransactionalStore, TransactionResult } from './stores/contract.js';
export type { MemoryStoreOptions } from './stores/memory.js';
export { MemoryStore } from './stores/memory.js';
export { SIGNATURE_HINTS } from './verify/diagnosis.js';
export type { RelayTrustOptions } from './verify/relay-header.js';
export type { Secret, SecretList, SecretResolver, Secrets } from './verify/secrets.js';
export type {
  SignatureAlgorithm,
  SignatureOptions,
  VerifyResult,
} from './verify/signature.js';
export { sign, verifySignature } from './verify/signature.js';
export type { DeliveryExplanation, MatchedSecret, NotificationInput } from './verify/verify.js';
export { explainDelivery, verifyNotification } from './verify/verify.js';
