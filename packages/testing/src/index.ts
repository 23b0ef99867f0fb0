// `@payhook/testing`: what a merchant's unit test of its webhook route imports: signed fake notifications
// (`fakePurchase`, …), `signWebhook`, `postWebhook` (supertest), `createTestHandler`, the delivery scenarios and
// `replayDeliveries`. The fake payment service is `@payhook/testing/fake` (and `@payhook/testing/nock`).
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
