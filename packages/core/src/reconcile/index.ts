// Reconciliation of orders whose webhook never came: the service's re-send API (spec 4.3, 4.4) and a reconciler
// that hands the records it answers to the webhook handler's `process`.

export type { WatchedPayment, WatchStore } from '../watch/contract.js';
export { MemoryWatchStore } from '../watch/memory.js';
export type { OverduePayment, OverdueReason, WatchLogger, WatchOutage } from '../watch/overdue.js';
export type { PaymentRegistry } from '../watch/register.js';
export type {
  PaymentWatch,
  PaymentWatchOptions,
  WatchRegistration,
  WatchRunReport,
} from '../watch/watch.js';
export { createPaymentWatch } from '../watch/watch.js';
export type { ApiClient, ApiClientOptions, ResendAnswer, ResendClient, ResendRequest } from './api-client.js';
export { createApiClient } from './api-client.js';
export type { ApiErrorCode, ApiViolation } from './api-errors.js';
export { ApiError } from './api-errors.js';
export type {
  CreatedPayment,
  CreatePaymentRequest,
  CreateSplitPaymentRequest,
} from './create-payment.js';
export type {
  PendingOrder,
  ReconcileReport,
  ReconcileResult,
  Reconciler,
  ReconcilerOptions,
  ReconcileStatus,
} from './reconciler.js';
export { createReconciler } from './reconciler.js';
export { createRedactor } from './redact.js';
export type { RequestSigner, SignableRequest } from './request-signer.js';
export { hmacRequestSigner } from './request-signer.js';
