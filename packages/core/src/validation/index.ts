// `@payhook/core/validation`: what a merchant sends the service (spec part 4), typed and checked before it goes:
// payment, split and subscription requests, card fields, and the records the service answers with.

export { CUSTOMER_FIELDS } from '../notification/customer-fields.js';
export type { CardFields } from './card.js';
export { luhnCheck, validateCard } from './card.js';
export { isValidAmount } from './formats.js';
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
export type { ServiceLevelOptions, ServiceLevelResult } from './service-level.js';
export { validateAtServiceLevel } from './service-level.js';
export { validatePaymentRequest } from './validate.js';
export { resolveInitRecurring, validateInitRecurring } from './validate-recurring.js';
export { validateSplitPurchaseRequest } from './validate-split.js';
export type { SplitSumRule, ValidationOptions, ValidationResult, Violation } from './violations.js';
