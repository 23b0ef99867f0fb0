// Reconciliation of orders whose webhook never came: the service's re-send API (spec 4.3, 4.4) and a reconciler
// that hands the records it answers to the webhook handler's `process`.
export type {
  ApiClient,
  ApiClientOptions,
  RequestSigner,
  ResendAnswer,
  ResendClient,
  ResendRequest,
  SignableRequest,
} from './api-client.js';
export { createApiClient, hmacRequestSigner } from './api-client.js';
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
