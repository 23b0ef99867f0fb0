// `@payhook/testing/fake`: the fake payment service, for integration tests that run the whole loop offline (the API,
// the hosted checkout, subscriptions on a test clock, an outbox of signed webhooks): `FakeService`, and
// `startFakeServer` over HTTP (what `payhook serve` runs). Over nock: `mockPaymentApi` from `@payhook/testing/nock`.
// A merchant's unit test of its webhook route needs none of it: that is the main entry.
export type { IntervalUnit } from '@payhook/payments';
export type { Duration } from './fake/calendar.js';
export type { FakeClock, Timeline } from './fake/clock.js';
export type { FakeViolation } from './fake/errors.js';
export { FakeServiceError } from './fake/errors.js';
export type { OperationRoute } from './fake/operation-requests.js';
export type { DeliveryAttempt, DeliveryFaults } from './fake/outbox.js';
export { DEFAULT_RETRY_SCHEDULE } from './fake/outbox.js';
export type { PaymentOutcome } from './fake/outcomes.js';
export { TEST_CARDS, THREE_DS_CODE } from './fake/outcomes.js';
export type { FakeProject, FakeProjectOptions } from './fake/projects.js';
export { FakeService } from './fake/service.js';
export type { SubscriptionPlan, SubscriptionStatus } from './fake/subscriptions.js';
export type { TransportAnswer, WebhookMessage, WebhookTransport } from './fake/transport.js';
export { fetchTransport } from './fake/transport.js';
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
export type { FakeServer, FakeServerOptions } from './server.js';
export { startFakeServer } from './server.js';
