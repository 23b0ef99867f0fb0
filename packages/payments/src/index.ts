// `@payhook/payments`: sending and following a payment. The service's API (create, re-send, capture, void, refund,
// the order's operations: spec parts 2.2 and 4), the reconciler and the watch of orders whose webhook never came,
// the ledger of what each payment is, and request and card validation before anything goes.

export { CUSTOMER_FIELDS } from '@payhook/core/adapter';
export type { Appended, LedgerStore } from './ledger/contract.js';
export type {
  ChargeEntry,
  ChargeState,
  ConflictReason,
  DeliveryCause,
  FactDecision,
  LedgerConflict,
  PaymentEntry,
  PaymentState,
  SubscriptionStatus,
  Transition,
  TransitionSubject,
} from './ledger/entry.js';
export type { LedgerFact } from './ledger/fact.js';
export type { PaymentLedger, PaymentLedgerOptions, TransitionListener } from './ledger/ledger.js';
export { createPaymentLedger } from './ledger/ledger.js';
export { MemoryLedgerStore } from './ledger/memory.js';
export type {
  ApiClient,
  ApiClientOptions,
  ResendAnswer,
  ResendClient,
  ResendRequest,
} from './reconcile/api-client.js';
export { createApiClient } from './reconcile/api-client.js';
export type { ApiErrorCode, ApiViolation } from './reconcile/api-errors.js';
export { ApiError } from './reconcile/api-errors.js';
export type {
  CreatedPayment,
  CreatePaymentRequest,
  CreateSplitPaymentRequest,
} from './reconcile/create-payment.js';
export type {
  CaptureRequest,
  OrderOperation,
  RefundRequest,
  SplitCaptureRequest,
  VoidRequest,
} from './reconcile/operations.js';
export type {
  PendingOrder,
  ReconcileReport,
  ReconcileResult,
  Reconciler,
  ReconcilerOptions,
  ReconcileStatus,
} from './reconcile/reconciler.js';
export { createReconciler } from './reconcile/reconciler.js';
export { createRedactor } from './reconcile/redact.js';
export type { RequestSigner, SignableRequest } from './reconcile/request-signer.js';
export { hmacRequestSigner } from './reconcile/request-signer.js';
export type { PaymentRegistry } from './reconcile/watched-create.js';
export type { CardFields } from './validation/card.js';
export { luhnCheck, validateCard } from './validation/card.js';
export { isValidAmount } from './validation/formats.js';
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
} from './validation/requests.js';
export type { ServiceLevelOptions, ServiceLevelResult } from './validation/service-level.js';
export { validateAtServiceLevel } from './validation/service-level.js';
export { validatePaymentRequest } from './validation/validate.js';
export { resolveInitRecurring, validateInitRecurring } from './validation/validate-recurring.js';
export { validateSplitPurchaseRequest } from './validation/validate-split.js';
export type {
  SplitSumRule,
  ValidationOptions,
  ValidationResult,
  Violation,
} from './validation/violations.js';
export type { WatchedPayment, WatchStore } from './watch/contract.js';
export type { WatchErrorCode } from './watch/errors.js';
export { WatchError } from './watch/errors.js';
export { MemoryWatchStore } from './watch/memory.js';
export type { OverduePayment, OverdueReason, WatchLogger, WatchOutage } from './watch/overdue.js';
export type {
  PaymentWatch,
  PaymentWatchOptions,
  WatchRegistration,
  WatchRunReport,
} from './watch/watch.js';
export { createPaymentWatch } from './watch/watch.js';
