export type {
  DedupeStore,
  Delivery,
  Notification,
  NotificationEvent,
  NotificationFor,
  NotificationHandler,
  PurchaseNotification,
  RecurringNotification,
  RefundNotification,
  TransactionalStore,
  WebhookErrorCode,
  WebhookResult,
} from '@payhook/core';
export {
  deferContinue,
  HandlerError,
  MemoryStore,
  PayloadError,
  RequestError,
  SignatureError,
  StoreError,
  WebhookError,
} from '@payhook/core';
export type { NotificationMethodDecorator } from './decorators.js';
export { OnAnyNotification, OnNotification } from './decorators.js';
export { PayhookModule } from './module.js';
export type { NestWebhookContext, PayhookModuleAsyncOptions, PayhookModuleOptions } from './options.js';
export { PAYHOOK_OPTIONS } from './options.js';
export { PayhookWebhooks } from './webhooks.js';
