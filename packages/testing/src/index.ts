export type { IntervalUnit } from '@payhook/payments';
export type { Duration } from './fake/calendar.js';
export type { FakeClock, Timeline } from './fake/clock.js';
export type { FakeViolation } from './fake/errors.js';
export { FakeServiceError } from './fake/errors.js';
export type { OperationRoute } from './fake/operation-requests.js';
export type {
  DeliveryAttempt,
  DeliveryFaults,
  TransportAnswer,
  WebhookMessage,
  WebhookTransport,
} from './fake/outbox.js';
export { DEFAULT_RETRY_SCHEDULE, fetchTransport } from './fake/outbox.js';
export type { PaymentOutcome } from './fake/outcomes.js';
export { TEST_CARDS, THREE_DS_CODE } from './fake/outcomes.js';
export type { FakeProject, FakeProjectOptions } from './fake/projects.js';
export { FakeService } from './fake/service.js';
export type { SubscriptionPlan, SubscriptionStatus } from './fake/subscriptions.js';
export type {
  AuthCheck,
  CheckoutAction,
  CheckoutCard,
  CheckoutStep,
  CheckoutView,
  CreatedPayment,
  FakeCharge,
  FakePaymentView,
  FakeServiceOptions,
  FakeSubscriptionView,
  Wallet,
} from './fake/types.js';
export { DECLINED, PENDING_3DS } from './fixtures/codes.js';
export type { RecurringChargeOptions } from './fixtures/primary.js';
export {
  fakeAuth,
  fakeCredit,
  fakeLookup,
  fakeP2p,
  fakePurchase,
  fakeRecurringCharge,
} from './fixtures/primary.js';
export type { SecondaryOptions } from './fixtures/secondary.js';
export { fakeCapture, fakeRefund, fakeVoid } from './fixtures/secondary.js';
export type { FakeOptions } from './fixtures/seed.js';
export { changeableAmount, failure, success, threeDsPending } from './fixtures/states.js';
export type {
  FakeAuth,
  FakeCapture,
  FakeCredit,
  FakeLookup,
  FakeNotification,
  FakeP2p,
  FakePrimary,
  FakePurchase,
  FakeRecurringCharge,
  FakeRefund,
  FakeSecondary,
  FakeVoid,
  Wire,
} from './fixtures/wire.js';
export type { ReplayedDelivery, ReplayOptions } from './replay.js';
export { replayDeliveries } from './replay.js';
export { burst, outOfOrder, redeliver, redeliverWithNewField } from './scenarios.js';
export type { FakeServer, FakeServerOptions } from './server.js';
export { startFakeServer } from './server.js';
export type { SignedWebhook, SignVariant, SignWebhookOptions } from './sign.js';
export { EXTRA_FIELD, SIGN_VARIANTS, signWebhook } from './sign.js';
export type {
  FetchHandler,
  PostWebhookOptions,
  RequestListener,
  WebhookResponse,
  WebhookTarget,
} from './supertest.js';
export { postWebhook } from './supertest.js';
export type { CallMatcher, RecordedCall, TestHandler } from './test-handler.js';
export { createTestHandler } from './test-handler.js';
