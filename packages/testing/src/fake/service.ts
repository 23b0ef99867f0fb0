import { randomInt } from 'node:crypto';
import type { OperationRecord, PaymentRecord } from '@payhook/payments';
import { nextCharge, runCharges } from './charges.js';
import {
  checkoutOf,
  completeCheckout,
  confirmThreeDs,
  expirePayments,
  nextExpiry,
  payByCard,
  payByWallet,
} from './checkout.js';
import { FakeClock } from './clock.js';
import { FakeServiceError } from './errors.js';
import { createIdSource, type IdSource } from './ids.js';
import { type Ledger, ownerKey, paymentState, subscriptionOf, viewOf } from './ledger.js';
import { type OperationRoute, operationRequest, orderOperations } from './operation-requests.js';
import { capture, refund, voidPayment } from './operations.js';
import { type DeliveryAttempt, type DeliveryFaults, Outbox } from './outbox.js';
import type { PaymentOutcome } from './outcomes.js';
import { checkoutUrl, createPayment, threeDsUrl } from './payments.js';
import { createProject, type FakeProject, type FakeProjectOptions } from './projects.js';
import { resendWebhook } from './resend.js';
import type {
  AuthCheck,
  CheckoutAction,
  CheckoutCard,
  CheckoutStep,
  CheckoutView,
  CreatedPayment,
  FakePaymentView,
  FakeServiceOptions,
  FakeSubscriptionView,
  Wallet,
} from './types.js';

/** A scheme word as `X-API-AUTH` may carry it: letters, digits and `-`. */
export const SCHEME_WORD = /^[A-Za-z0-9-]+$/;

/**
 * A stateful fake of the payment service, with no HTTP inside: projects, payments, operations, subscriptions, a
 * test clock and an outbox of signed webhooks. `mockPaymentApi` (nock) and `startFakeServer` (a real server)
 * put its API on the wire.
 *
 * @example
 * const fake = new FakeService({ secret: 'test-secret', now: '2026-01-31T09:00:00Z', seed: 7 });
 * const created = fake.createPayment({ pos_id: fake.project.posId, mode: 'direct', method: 'purchase', ... });
 * await fake.idle(); // the success webhook reached server_url
 * fake.refund(created.record.payment_id, 5);
 */
export class FakeService {
  readonly baseUrl: string;
  readonly clock: FakeClock;
  /** Webhooks waiting and sent; faults are set here (`setFaults`, `pause`, `resume`). */
  readonly outbox: Outbox;
  readonly verifyAuth: ((check: AuthCheck) => boolean) | undefined;
  /** The scheme word `X-API-AUTH` must carry when `strict` (`undefined`: any). */
  readonly authScheme: string | undefined;
  /** Whether the fake also enforces the rules the spec does not show (`strict` option). */
  readonly strict: boolean;
  readonly #ledger: Ledger;
  readonly #credentials: IdSource;

  constructor(options: FakeServiceOptions = {}) {
    const clock = new FakeClock(options.now ?? Date.now());
    const seed = options.seed ?? 1;
    const outbox = new Outbox({
      now: () => clock.now().getTime(),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.retrySchedule ? { retrySchedule: options.retrySchedule } : {}),
      ...(options.algorithm ? { algorithm: options.algorithm } : {}),
    });
    this.baseUrl = (options.baseUrl ?? 'https://payments.fake.test').replace(/\/+$/, '');
    this.clock = clock;
    this.outbox = outbox;
    this.verifyAuth = options.verifyAuth;
    if (options.authScheme !== undefined && !SCHEME_WORD.test(String(options.authScheme))) {
      throw new TypeError('[@payhook/testing] authScheme must be a word of letters, digits and "-".');
    }
    this.authScheme = options.authScheme?.replace(/-HMAC-SHA256$/, '');
    this.strict = options.strict ?? false;
    const ledger: Ledger = {
      baseUrl: this.baseUrl,
      clock,
      outbox,
      ids: createIdSource(options.fixedIds ? seed : (seed ^ randomInt(1, 2 ** 31)) >>> 0),
      splitSum: options.splitSum,
      strict: this.strict,
      refundWebhookCode: options.refundWebhookCode ?? '1000',
      projects: new Map(),
      payments: new Map(),
      byOrder: new Map(),
      byCheckout: new Map(),
      subscriptions: new Map(),
      tokens: new Map(),
      receipts: new Map(),
      outcomeByOrder: new Map(),
      outcomeByCard: new Map(),
    };
    this.#ledger = ledger;
    this.#credentials = createIdSource(seed);
    if (options.secret !== undefined) this.addProject({ ...options, secret: options.secret });
    for (const project of options.projects ?? []) this.addProject(project);
    clock.register({ next: () => nextCharge(ledger), run: (now) => runCharges(ledger, now) });
    clock.register({ next: () => nextExpiry(ledger), run: (now) => expirePayments(ledger, now) });
    clock.register(outbox);
  }

  /** Adds a POS project; credentials not given are generated from the seed. */
  addProject(options: FakeProjectOptions): FakeProject {
    const project = createProject(options, this.#credentials);
    this.#ledger.projects.set(project.posId, project);
    return project;
  }

  /** The first project (the one most tests use). */
  get project(): FakeProject {
    const first = this.#ledger.projects.values().next();
    if (first.done) throw new FakeServiceError('S-404', 401, 'The fake service has no project: add one.');
    return first.value;
  }

  /** Every project. */
  get projects(): readonly FakeProject[] {
    return [...this.#ledger.projects.values()];
  }

  /** Every delivery attempt so far, with the receiver's answer. */
  get deliveries(): readonly DeliveryAttempt[] {
    return this.outbox.attempts;
  }

  /** Sets delivery faults for webhooks enqueued from now on (`{}` clears them). */
  setDeliveryFaults(faults: DeliveryFaults): void {
    this.outbox.setFaults(faults);
  }

  /** Resolves when every webhook due now was attempted. */
  idle(): Promise<void> {
    return this.outbox.idle();
  }

  /** The project whose API key is `apiKey`. */
  projectByApiKey(apiKey: string): FakeProject | undefined {
    for (const project of this.#ledger.projects.values()) if (project.apiKey === apiKey) return project;
    return undefined;
  }

  /** Fixes the outcome of an order, or of every payment with a card number. */
  setOutcome(target: { orderId: string } | { cardNumber: string }, outcome: PaymentOutcome): void {
    if ('orderId' in target) this.#ledger.outcomeByOrder.set(target.orderId, outcome);
    else this.#ledger.outcomeByCard.set(target.cardNumber, outcome);
  }

  /** Outcomes of a subscription's next charges and retries, in order (then success). `3ds` counts as decline. */
  queueChargeOutcomes(subscriptionId: string, outcomes: readonly PaymentOutcome[]): void {
    subscriptionOf(this.#ledger, subscriptionId).outcomes.push(...outcomes);
  }

  /** The hosted checkout page of a payment. */
  checkoutUrl(checkoutId: string): string {
    return checkoutUrl(this.#ledger, checkoutId);
  }

  /** The 3-D Secure page of a payment (`user_action_url`). */
  threeDsUrl(checkoutId: string): string {
    return threeDsUrl(this.#ledger, checkoutId);
  }

  /**
   * Creates a payment (or a split payment) as `POST /api/v1/payment` (`/split/purchase`) would: core's validators,
   * a unique order_id per project, then the outcome's webhooks. `posId` names the caller's project (the API
   * passes the authenticated one); a body `pos_id` of another project is refused like bad credentials.
   * @throws {FakeServiceError} `S-404` (401) unknown or foreign pos_id, `V-400` (400) violations, `P-409` (409) a repeated order.
   */
  createPayment(
    body: Readonly<Record<string, unknown>>,
    options?: { split?: boolean; posId?: string },
  ): CreatedPayment {
    return createPayment(this.#ledger, body, options);
  }

  /** The payment behind a checkout (hosted form or 3DS page), for the pages. */
  checkout(checkoutId: string): CheckoutView {
    return checkoutOf(this.#ledger, checkoutId);
  }

  /** What `receipt_url` shows: the payment, charge or refund it was issued for, or `undefined`. */
  receipt(token: string): PaymentRecord | OperationRecord | undefined {
    const record = this.#ledger.receipts.get(token);
    return record === undefined ? undefined : structuredClone(record);
  }

  /**
   * The shortcut past the checkout's and the 3DS page's fields: settles the payment as `action` says, sends its
   * webhook, and answers where to send the customer (`result_url`, when the request had one).
   * @throws {FakeServiceError} `N-404` (404) unknown checkout, `C-409` (409) a checkout already completed,
   * `C-410` (410) a hosted payment past its `order_timeout`.
   */
  completeCheckout(checkoutId: string, action: CheckoutAction): CheckoutStep {
    return completeCheckout(this.#ledger, checkoutId, action);
  }

  /**
   * What the hosted checkout's card form does: checks the card (Luhn, expiry on the fake clock, CVV digits, a
   * cardholder), then the card decides the outcome (`TEST_CARDS`, `setOutcome`); `redirectTo` is the 3DS page
   * when the card asks for 3-D Secure, else `result_url`.
   * @throws {FakeServiceError} `V-400` (400) with the card's violations, and as `completeCheckout`.
   */
  payByCard(checkoutId: string, card: CheckoutCard): CheckoutStep {
    return payByCard(this.#ledger, checkoutId, card);
  }

  /**
   * What the hosted checkout's Apple Pay and Google Pay buttons do: the wallet pays (`payway` names it) unless
   * `setOutcome` chose otherwise for the order.
   * @throws {FakeServiceError} as `completeCheckout`.
   */
  payByWallet(checkoutId: string, wallet: Wallet): CheckoutStep {
    return payByWallet(this.#ledger, checkoutId, wallet);
  }

  /**
   * What the 3DS page does with its code: `THREE_DS_CODE` pays, any other code fails the payment (`2123`).
   * @throws {FakeServiceError} `C-409` (409) when no 3-D Secure step waits, and as `completeCheckout`.
   */
  confirmThreeDs(checkoutId: string, code: string): CheckoutStep {
    return confirmThreeDs(this.#ledger, checkoutId, code);
  }

  /**
   * Captures an authorization (`method: auth`), all of it or `amount`; sends the capture webhook (6.2).
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not capturable, `O-422` amount out of range.
   */
  capture(paymentId: string, amount?: number): OperationRecord {
    return capture(this.#ledger, paymentId, amount);
  }

  /**
   * Voids an uncaptured authorization or an unrefunded purchase, for its whole amount.
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` nothing to void.
   */
  void(paymentId: string): OperationRecord {
    return voidPayment(this.#ledger, paymentId);
  }

  /**
   * Refunds a purchase (or a captured auth), all that is left or `amount`; sends the refund webhook
   * (`refundWebhookCode`, `1000` by default) and answers the refund response, `1004` as spec 3.1 shows it.
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not refundable, `O-422` amount out of range.
   */
  refund(paymentId: string, amount?: number): OperationRecord {
    return refund(this.#ledger, paymentId, amount);
  }

  /**
   * `POST /api/v1/capture`, `/void`, `/refund` or `/split/capture` with the body public code sends (`order_id`,
   * `charge_amount` or `refund_amount`, `order_amount`, `order_currency` or `currency`, `server_url`, `split`), for
   * the project `posId` (the first by default): the operation's record, its webhook queued.
   * @throws {FakeServiceError} `S-404` (401) a foreign `pos_id`, `V-400`, `N-404` no such order, `O-409`, `O-422`.
   */
  operationRequest(
    route: OperationRoute,
    body: Readonly<Record<string, unknown>>,
    posId: string = this.project.posId,
  ): OperationRecord {
    const project = this.#ledger.projects.get(posId);
    if (!project) throw new FakeServiceError('S-404', 401, 'Invalid pos_id field or credentials');
    return operationRequest(this.#ledger, project, route, { ...body });
  }

  /**
   * The order's payment record and its operations, oldest first: what `GET /api/v1/pos/<pos_id>/orders/<order_id>`
   * answers (the first project unless `posId`).
   * @throws {FakeServiceError} `N-404` (404) when there is no such order.
   */
  orderOperations(orderId: string, posId: string = this.project.posId): (PaymentRecord | OperationRecord)[] {
    return orderOperations(this.#ledger, posId, orderId);
  }

  /** Cancels a subscription: no charge or retry runs after this (`recurring.status` `canceled`). */
  cancelSubscription(subscriptionId: string): void {
    const subscription = subscriptionOf(this.#ledger, subscriptionId);
    subscription.status = 'canceled';
    subscription.retry = undefined;
    paymentState(this.#ledger, subscription.paymentId).record.recurring = {
      id: subscription.id,
      status: 'canceled',
    };
  }

  /**
   * `GET /api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true[&transactionId=]`: sends the webhook of
   * that operation again and answers its record (the latest charge of a subscription without `transactionId`).
   * @throws {FakeServiceError} `N-404` (404) when there is no such order, operation or transaction.
   */
  resend(
    posId: string,
    orderId: string,
    operation: string,
    transactionId?: string,
  ): PaymentRecord | OperationRecord {
    return resendWebhook(this.#ledger, posId, orderId, operation, transactionId);
  }

  /** A payment's current state, or `undefined`. */
  payment(paymentId: string): FakePaymentView | undefined {
    const state = this.#ledger.payments.get(paymentId);
    if (!state) return undefined;
    return {
      record: viewOf(this.#ledger, state, state.record),
      checkoutId: state.checkoutId,
      operations: structuredClone(state.operations),
      charges: structuredClone(state.charges),
    };
  }

  /** The payment of an order (first project unless `posId`). */
  paymentByOrder(orderId: string, posId: string = this.project.posId): FakePaymentView | undefined {
    const id = this.#ledger.byOrder.get(ownerKey(posId, orderId));
    return id === undefined ? undefined : this.payment(id);
  }

  /** A subscription's state, or `undefined`. */
  subscription(subscriptionId: string): FakeSubscriptionView | undefined {
    const subscription = this.#ledger.subscriptions.get(subscriptionId);
    if (!subscription) return undefined;
    return {
      id: subscription.id,
      paymentId: subscription.paymentId,
      status: subscription.status,
      plan: structuredClone(subscription.plan),
      charges: structuredClone(paymentState(this.#ledger, subscription.paymentId).charges),
    };
  }
}
