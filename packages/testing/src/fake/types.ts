import type { SignatureAlgorithm } from '@payhook/core';
import type { OperationRecord, PaymentRecord, SplitSumRule } from '@payhook/payments';
import type { FakeProject, FakeProjectOptions } from './projects.js';
import type { SubscriptionPlan, SubscriptionStatus } from './subscriptions.js';
import type { WebhookTransport } from './transport.js';

/**
 * What a test may check of `X-API-AUTH` beyond its shape (how the service computes SIGNATURE is not shown).
 *
 * @example
 * new FakeService({ secret, verifyAuth: ({ signature, body }: AuthCheck) => signature === mySign(body) });
 */
export interface AuthCheck {
  project: FakeProject;
  apiKey: string;
  signature: string;
  method: string;
  /** Path and query as requested. */
  path: string;
  /** The body as received ('' without one). */
  body: string;
}

/**
 * Options of a `FakeService`: the first project's credentials at the top level, more in `projects`.
 *
 * @example
 * new FakeService({ secret: 'whsec', now: '2026-01-31T09:00:00Z', seed: 7, retrySchedule: [] });
 */
export interface FakeServiceOptions extends Partial<FakeProjectOptions> {
  /**
   * The service's `{base_url}`: used in `Location`, `user_action_url` and `receipt_url`.
   * @default 'https://payments.fake.test'
   */
  baseUrl?: string;
  /** More projects besides the one described by the top-level `secret`, `posId`… */
  projects?: readonly FakeProjectOptions[];
  /** @default the current time */
  now?: Date | string | number;
  /**
   * Seed of the generated credentials (`posId`, `apiKey`, `endpointsKey`) and, with `fixedIds`, of every id.
   * @default 1
   */
  seed?: number;
  /**
   * Draw payment, transaction, operation and subscription ids, card tokens and checkout ids from `seed` alone, the
   * same on every run (for snapshots). Off, they are mixed with a value fresh for each fake, so a second run
   * against a store that remembers the first (Redis, PostgreSQL) is not answered `duplicate` throughout. With
   * fixed ids, clear the store between runs; `api.done()` names the webhooks a stale store swallowed either way.
   * @default false
   */
  fixedIds?: boolean;
  /** How webhooks are delivered. @default fetchTransport (form POST with `fetch`) */
  transport?: WebhookTransport;
  /**
   * Delays (fake-clock ms) of the retries after a non-2xx answer; `[]` turns retries off.
   * @default [60_000, 300_000, 1_800_000, 7_200_000]
   */
  retrySchedule?: readonly number[];
  /**
   * The digest of the webhook signature: `sha1` signs with SHA-1 (28 characters), as every public integration
   * verifies; the spec's SHA-256 (44 characters) by default. `payhook serve --algorithm sha1` sets it.
   * @default 'sha256'
   */
  algorithm?: SignatureAlgorithm;
  /**
   * Checks SIGNATURE of `X-API-AUTH` instead of the fake: without it, the HMAC of the
   * `<WORD>-HMAC-SHA256 <API_KEY>:<hex>` form (over the raw body, or `METHOD\nPATH?QUERY\nBODY`) or the secret of
   * the `<WORD> <API_KEY>:<API_SECRET>` form is compared with the project's `apiSecret`.
   */
  verifyAuth?: (check: AuthCheck) => boolean;
  /**
   * The service's scheme word in `X-API-AUTH` (the spec writes the neutral `SVC`): with `strict`, a request with
   * another word is refused. Without `strict` any word is accepted. `api.headers()` sends it.
   * @default undefined (any word; `api.headers()` sends `SVC`)
   */
  authScheme?: string;
  /**
   * How split amounts must relate to `amount` on `/split/purchase` (not shown by the spec): core's `splitSum`.
   * @default 'ignore', or 'equal' when `strict`
   */
  splitSum?: SplitSumRule;
  /**
   * Also enforce the rules the spec does not show, as core's validators do: `description` and `currency` required,
   * split amounts adding up to `amount` (unless `splitSum`), no card fields on a hosted request, digits only in
   * `cc_number`, `init_recurring` with `purchase` only. Off, the fake accepts what the service could (a card number
   * with spaces is read without them, hosted card fields are ignored, a missing currency is `UAH`); each rule is
   * listed in docs/assumptions.md.
   * @default false
   */
  strict?: boolean;
  /**
   * `status_code` of refund webhooks. Spec 3.1 shows `1000` on refund webhooks and `1004` only on a refund
   * response; `'1004'` lets a test prove its handler takes both.
   * @default '1000'
   */
  refundWebhookCode?: '1000' | '1004';
}

/**
 * What creating a payment gives: the record (direct) or where to send the customer (hosted).
 *
 * @example
 * const created = fake.createPayment(body);
 * if (created.mode === 'hosted') redirect(created.location);
 */
export type CreatedPayment =
  | { readonly mode: 'direct'; readonly record: PaymentRecord }
  | { readonly mode: 'hosted'; readonly location: string; readonly paymentId: string };

/**
 * A shortcut past the checkout or 3DS page's fields (`completeCheckout`, or a form POST of `action=`): pay,
 * decline, or fail 3-D Secure.
 *
 * @example
 * fake.completeCheckout(checkoutId, 'fail_3ds');
 */
export type CheckoutAction = 'pay' | 'decline' | 'fail_3ds';

/**
 * A card as the customer types it into the hosted checkout. The fake checks it as the spec asks of any card page
 * (Luhn, expiry not past on the fake clock, CVV of 3 or 4 digits) whatever the page's script did.
 *
 * @example
 * fake.payByCard(checkoutId, { number: '4242 4242 4242 4242', expMonth: 12, expYear: 30, cvv: '123', holder: 'Ada' });
 */
export interface CheckoutCard {
  /** The card number; spaces and dashes between the digits are dropped. */
  number: string;
  /** 1-12. */
  expMonth: number;
  /** 2 or 4 digits (`30` is 2030). */
  expYear: number;
  /** 3 or 4 digits. */
  cvv: string;
  /** The name on the card; required. */
  holder: string;
}

/**
 * Where a checkout sends the customer next, and the payment as it stands.
 *
 * @example
 * const { record, redirectTo }: CheckoutStep = fake.payByCard(checkoutId, card);
 */
export interface CheckoutStep {
  /** The payment's record after the step. */
  record: PaymentRecord;
  /** The 3DS page while the payment waits for its code, else `result_url` (when the request had one). */
  redirectTo?: string;
}

/**
 * The payment behind a checkout, as the hosted form and the 3DS page show it.
 *
 * @example
 * const { record, open, threeDs, expired }: CheckoutView = fake.checkout(checkoutId);
 */
export interface CheckoutView {
  /** The payment's record as it stands. */
  readonly record: PaymentRecord;
  /** The project's `merchantName`. */
  readonly merchantName: string;
  /** Still to be paid: `init`, or `pending` on its 3DS step. */
  readonly open: boolean;
  /** Waiting for its 3-D Secure code. */
  readonly threeDs: boolean;
  /** Past its `order_timeout` unpaid. */
  readonly expired: boolean;
  /** When an unpaid hosted payment expires (`order_timeout`), on the fake clock. */
  readonly expiresAt?: Date;
}

/**
 * A wallet button of the hosted checkout; the payment's `payway` names it.
 *
 * @example
 * fake.payByWallet(checkoutId, 'google_pay');
 */
export type Wallet = 'apple_pay' | 'google_pay';

/**
 * One charge of a subscription, with its place in the schedule.
 *
 * @example
 * const dates = fake.subscription(id)!.charges.map((c: FakeCharge) => c.record.created_at);
 */
export interface FakeCharge {
  /** Index of the scheduled charge (0 = first after the initial payment). */
  readonly index: number;
  /** 0 for the scheduled attempt, then 1, 2… for retries. */
  readonly attempt: number;
  readonly at: Date;
  readonly record: PaymentRecord;
}

/**
 * A subscription as a test sees it.
 *
 * @example
 * const view: FakeSubscriptionView | undefined = fake.subscription(id);
 */
export interface FakeSubscriptionView {
  readonly id: string;
  readonly paymentId: string;
  readonly status: SubscriptionStatus;
  readonly plan: SubscriptionPlan;
  readonly charges: readonly FakeCharge[];
}

/**
 * A payment as a test sees it: its current record, operations and charges.
 *
 * @example
 * const { record, checkoutId } = fake.paymentByOrder('order-1')!;
 */
export interface FakePaymentView {
  readonly record: PaymentRecord;
  readonly checkoutId: string;
  readonly operations: readonly OperationRecord[];
  readonly charges: readonly FakeCharge[];
}
