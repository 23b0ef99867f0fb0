import type { SignatureAlgorithm } from '@payhook/core';
import type { InitRecurring, OperationRecord, PaymentRecord, SplitSumRule } from '@payhook/core/validation';
import { addDuration, formatTimestamp } from './fake/calendar.js';
import { FakeClock } from './fake/clock.js';
import { credentialsError, FakeServiceError } from './fake/errors.js';
import { createIdSource, type IdSource } from './fake/ids.js';
import { type DeliveryAttempt, type DeliveryFaults, Outbox, type WebhookTransport } from './fake/outbox.js';
import { chooseOutcome, type PaymentOutcome, STATUS } from './fake/outcomes.js';
import { createProject, type FakeProject, type FakeProjectOptions } from './fake/projects.js';
import {
  commission,
  type FakeRecord,
  fromMinor,
  maskCard,
  newPaymentRecord,
  receiptUrl,
  toMinor,
} from './fake/records.js';
import {
  type FakeSubscription,
  nextEvent,
  type SubscriptionStatus,
  scheduleAnchor,
} from './fake/subscriptions.js';
import { assertValidRequest, planFor } from './fake/validation.js';

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
  /** Seed of every generated id and key. @default 1 */
  seed?: number;
  /** How webhooks are delivered. @default fetchTransport (form POST with `fetch`) */
  transport?: WebhookTransport;
  /**
   * Delays (fake-clock ms) of the retries after a non-2xx answer; `[]` turns retries off.
   * @default [60_000, 300_000, 1_800_000, 7_200_000]
   */
  retrySchedule?: readonly number[];
  /** @default 'sha256' */
  algorithm?: SignatureAlgorithm;
  /** Checks SIGNATURE of `X-API-AUTH`; without it only the header's shape and the keys are checked. */
  verifyAuth?: (check: AuthCheck) => boolean;
  /**
   * How split amounts must relate to `amount` on `/split/purchase` (not shown by the spec): core's `splitSum`.
   * @default 'equal'
   */
  splitSum?: SplitSumRule;
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
 * A customer's choice on the checkout or 3DS page.
 *
 * @example
 * fake.completeCheckout(checkoutId, 'fail_3ds');
 */
export type CheckoutAction = 'pay' | 'decline' | 'fail_3ds';

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
  readonly plan: FakeSubscription['plan'];
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

interface PaymentState {
  readonly project: FakeProject;
  readonly record: FakeRecord;
  readonly checkoutId: string;
  readonly outcome: PaymentOutcome;
  readonly subscriptionId: string | undefined;
  readonly serverUrl: string | undefined;
  readonly charges: FakeCharge[];
  readonly operations: OperationRecord[];
  capturedMinor: number;
  refundedMinor: number;
  voided: boolean;
  /** Fake-clock ms when an unpaid hosted payment expires (`order_timeout`), if it has one. */
  readonly expiresAt: number | undefined;
}

const CARD_FIELDS = ['cc_number', 'exp_month', 'exp_year', 'card_cvv', 'cc_cvv', 'cc_token'];

function copy<T>(value: T): T {
  return structuredClone(value);
}

function ownerKey(posId: string, orderId: string): string {
  return `${posId}\u0000${orderId}`;
}

/**
 * A stateful fake of the payment service, with no HTTP inside: projects, payments, operations, subscriptions, a
 * test clock and an outbox of signed webhooks. `mockPaymentApi` (nock) and `startFakeServer` (a real server)
 * put its API on the wire.
 *
 * @example
 * const fake = new FakeService({ secret: 'test-secret', now: '2026-01-31T09:00:00Z', seed: 7 });
 * const created = fake.createPayment({ pos_id: fake.project.posId, mode: 'direct', method: 'purchase', ... });
 * await fake.idle(); // the success webhook reached server_url
 * fake.refund(created.record.payment_id as string, 5);
 */
export class FakeService {
  readonly baseUrl: string;
  readonly clock: FakeClock;
  /** Webhooks waiting and sent; faults are set here (`setFaults`, `pause`, `resume`). */
  readonly outbox: Outbox;
  readonly verifyAuth: ((check: AuthCheck) => boolean) | undefined;
  readonly #splitSum: SplitSumRule | undefined;
  readonly #refundWebhookCode: '1000' | '1004';
  readonly #ids: IdSource;
  readonly #receipts = new Map<string, FakeRecord | OperationRecord>();
  readonly #projects = new Map<string, FakeProject>();
  readonly #payments = new Map<string, PaymentState>();
  readonly #byOrder = new Map<string, string>();
  readonly #byCheckout = new Map<string, string>();
  readonly #subscriptions = new Map<string, FakeSubscription>();
  readonly #tokens = new Map<string, { mask: string; expiration: string }>();
  readonly #outcomeByOrder = new Map<string, PaymentOutcome>();
  readonly #outcomeByCard = new Map<string, PaymentOutcome>();

  constructor(options: FakeServiceOptions = {}) {
    this.baseUrl = (options.baseUrl ?? 'https://payments.fake.test').replace(/\/+$/, '');
    this.clock = new FakeClock(options.now ?? Date.now());
    this.#ids = createIdSource(options.seed ?? 1);
    this.verifyAuth = options.verifyAuth;
    this.#splitSum = options.splitSum;
    this.#refundWebhookCode = options.refundWebhookCode ?? '1000';
    this.outbox = new Outbox({
      now: () => this.clock.now().getTime(),
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.retrySchedule ? { retrySchedule: options.retrySchedule } : {}),
      ...(options.algorithm ? { algorithm: options.algorithm } : {}),
    });
    if (options.secret !== undefined) this.addProject(options as FakeProjectOptions);
    for (const project of options.projects ?? []) this.addProject(project);
    this.clock.register({ next: () => this.#nextCharge(), run: (now) => this.#runCharges(now) });
    this.clock.register({ next: () => this.#nextExpiry(), run: (now) => this.#expire(now) });
    this.clock.register(this.outbox);
  }

  /** Adds a POS project; credentials not given are generated from the seed. */
  addProject(options: FakeProjectOptions): FakeProject {
    const project = createProject(options, this.#ids);
    this.#projects.set(project.posId, project);
    return project;
  }

  /** The first project (the one most tests use). */
  get project(): FakeProject {
    const first = this.#projects.values().next();
    if (first.done) throw new FakeServiceError('S-404', 401, 'The fake service has no project: add one.');
    return first.value;
  }

  /** Every project. */
  get projects(): readonly FakeProject[] {
    return [...this.#projects.values()];
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
    for (const project of this.#projects.values()) if (project.apiKey === apiKey) return project;
    return undefined;
  }

  /** Fixes the outcome of an order, or of every payment with a card number. */
  setOutcome(target: { orderId: string } | { cardNumber: string }, outcome: PaymentOutcome): void {
    if ('orderId' in target) this.#outcomeByOrder.set(target.orderId, outcome);
    else this.#outcomeByCard.set(target.cardNumber, outcome);
  }

  /** Outcomes of a subscription's next charges and retries, in order (then success). `3ds` counts as decline. */
  queueChargeOutcomes(subscriptionId: string, outcomes: readonly PaymentOutcome[]): void {
    this.#subscription(subscriptionId).outcomes.push(...outcomes);
  }

  /** The hosted checkout page of a payment. */
  checkoutUrl(checkoutId: string): string {
    return `${this.baseUrl}/api/v1/checkout/${checkoutId}/form`;
  }

  /** The 3-D Secure page of a payment (`user_action_url`). */
  threeDsUrl(checkoutId: string): string {
    return `${this.baseUrl}/api/v1/checkout/${checkoutId}/3ds`;
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
    const posId = options?.posId ?? body.pos_id;
    const project = typeof posId === 'string' ? this.#projects.get(posId) : undefined;
    if (!project || (typeof body.pos_id === 'string' && body.pos_id !== project.posId))
      throw credentialsError();
    const now = this.clock.now();
    const split = options?.split ?? false;
    assertValidRequest(body, { split, sector: project.sector, now, splitSum: this.#splitSum });
    const request = body as Record<string, unknown> & { order_id: string; amount: number; currency: string };
    const key = ownerKey(project.posId, request.order_id);
    if (this.#byOrder.has(key)) {
      throw new FakeServiceError(
        'P-409',
        409,
        'A payment with this order_id already exists for this project.',
      );
    }
    const record = newPaymentRecord({ request, posId: project.posId, split, ids: this.#ids, now });
    const cardNumber = typeof request.cc_number === 'string' ? request.cc_number : undefined;
    this.#attachCard(record, request, cardNumber);
    const checkoutId = this.#ids.uuid();
    let subscriptionId: string | undefined;
    if (request.init_recurring !== undefined) {
      subscriptionId = this.#ids.uuid();
      const plan = planFor(request.init_recurring as InitRecurring, {
        amount: request.amount,
        createdAt: now,
      });
      this.#subscriptions.set(subscriptionId, {
        id: subscriptionId,
        paymentId: record.payment_id as string,
        plan,
        status: 'init',
        ...scheduleAnchor(plan, now),
        nextIndex: 0,
        retry: undefined,
        outcomes: [],
      });
      record.recurring = { id: subscriptionId, status: 'init' };
    }
    const state: PaymentState = {
      project,
      record,
      checkoutId,
      outcome: chooseOutcome(request.order_id, cardNumber, this.#outcomeByOrder, this.#outcomeByCard),
      subscriptionId,
      serverUrl: typeof request.server_url === 'string' ? request.server_url : undefined,
      charges: [],
      operations: [],
      capturedMinor: 0,
      refundedMinor: 0,
      voided: false,
      expiresAt:
        request.mode === 'hosted' && typeof request.order_timeout === 'number'
          ? now.getTime() + request.order_timeout * 1000
          : undefined,
    };
    this.#payments.set(record.payment_id as string, state);
    this.#byOrder.set(key, record.payment_id as string);
    this.#byCheckout.set(checkoutId, record.payment_id as string);

    if (request.mode === 'hosted') {
      Object.assign(record, STATUS.created);
      return {
        mode: 'hosted',
        location: this.checkoutUrl(checkoutId),
        paymentId: record.payment_id as string,
      };
    }
    if (state.outcome === '3ds') {
      Object.assign(record, STATUS.pending3ds, {
        user_action_required: true,
        user_action_url: this.threeDsUrl(checkoutId),
      });
      this.#notify(state, record);
    } else {
      this.#settle(state, state.outcome === 'decline' ? 'decline' : 'pay', false);
    }
    const view = this.#view(state, record);
    // The creating response shows the subscription as created (`init`, spec 4.5), whatever its webhook says.
    if (subscriptionId !== undefined) view.recurring = { id: subscriptionId, status: 'init' };
    return { mode: 'direct', record: view };
  }

  /** The payment behind a checkout (hosted form or 3DS page), for the pages. */
  checkout(checkoutId: string): { record: PaymentRecord; open: boolean; threeDs: boolean; expired: boolean } {
    const state = this.#state(this.#byCheckout.get(checkoutId));
    const status = state.record.status;
    return {
      record: this.#view(state, state.record),
      open: status === 'init' || status === 'pending',
      threeDs: status === 'pending',
      expired: state.record.status_code === STATUS.expired.status_code,
    };
  }

  /** What `receipt_url` shows: the payment, charge or refund it was issued for, or `undefined`. */
  receipt(token: string): PaymentRecord | OperationRecord | undefined {
    const record = this.#receipts.get(token);
    return record === undefined ? undefined : (copy(record) as PaymentRecord | OperationRecord);
  }

  /**
   * The customer's choice on the checkout form or the 3DS page: settles the payment, sends its webhook, and
   * answers where to send the customer (`result_url`, when the request had one).
   * @throws {FakeServiceError} `N-404` (404) unknown checkout, `C-409` (409) a checkout already completed,
   * `C-410` (410) a hosted payment past its `order_timeout`.
   */
  completeCheckout(
    checkoutId: string,
    action: CheckoutAction,
  ): { record: PaymentRecord; redirectTo?: string } {
    const state = this.#state(this.#byCheckout.get(checkoutId));
    const status = state.record.status;
    if (state.record.status_code === STATUS.expired.status_code) {
      throw new FakeServiceError('C-410', 410, 'This checkout expired: its order_timeout has passed.');
    }
    if (status !== 'init' && status !== 'pending') {
      throw new FakeServiceError('C-409', 409, 'This checkout is already completed.');
    }
    this.#settle(state, action, status === 'pending');
    const result = state.record.result_url;
    return {
      record: this.#view(state, state.record),
      ...(typeof result === 'string' ? { redirectTo: result } : {}),
    };
  }

  /**
   * Captures an authorization (`method: auth`), all of it or `amount`; sends the capture webhook (6.2).
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not capturable, `O-422` amount out of range.
   */
  capture(paymentId: string, amount?: number): OperationRecord {
    const state = this.#state(paymentId);
    const { record } = state;
    if (record.method !== 'auth' || record.status !== 'success' || state.voided || state.capturedMinor > 0) {
      throw new FakeServiceError(
        'O-409',
        409,
        'Only a successful, uncaptured, unvoided auth can be captured.',
      );
    }
    const minor = this.#operationAmount(
      state,
      amount,
      toMinor(record.amount as number, record.currency as string),
    );
    state.capturedMinor = minor;
    return this.#operation(state, 'capture', minor, STATUS.purchaseSuccess);
  }

  /**
   * Voids an uncaptured authorization or an unrefunded purchase, for its whole amount.
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` nothing to void.
   */
  void(paymentId: string): OperationRecord {
    const state = this.#state(paymentId);
    const { record } = state;
    if (record.status !== 'success' || state.voided || state.capturedMinor > 0 || state.refundedMinor > 0) {
      throw new FakeServiceError(
        'O-409',
        409,
        'Only a successful payment with no capture or refund can be voided.',
      );
    }
    state.voided = true;
    return this.#operation(
      state,
      'void',
      toMinor(record.amount as number, record.currency as string),
      STATUS.purchaseSuccess,
    );
  }

  /**
   * Refunds a purchase (or a captured auth), all that is left or `amount`; sends the refund webhook
   * (`refundWebhookCode`, `1000` by default) and answers the refund response, `1004` as spec 3.1 shows it.
   * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not refundable, `O-422` amount out of range.
   */
  refund(paymentId: string, amount?: number): OperationRecord {
    const state = this.#state(paymentId);
    const { record } = state;
    const paid =
      record.method === 'auth'
        ? state.capturedMinor
        : toMinor(record.amount as number, record.currency as string);
    if (record.status !== 'success' || state.voided || paid - state.refundedMinor <= 0) {
      throw new FakeServiceError('O-409', 409, 'Nothing is left to refund on this payment.');
    }
    const minor = this.#operationAmount(state, amount, paid - state.refundedMinor);
    state.refundedMinor += minor;
    const webhook = this.#refundWebhookCode === '1004' ? STATUS.refundSuccess : STATUS.purchaseSuccess;
    return { ...this.#operation(state, 'refund', minor, webhook), ...STATUS.refundSuccess };
  }

  /** Cancels a subscription: no charge or retry runs after this (`recurring.status` `canceled`). */
  cancelSubscription(subscriptionId: string): void {
    const subscription = this.#subscription(subscriptionId);
    subscription.status = 'canceled';
    subscription.retry = undefined;
    const state = this.#state(subscription.paymentId);
    state.record.recurring = { id: subscription.id, status: 'canceled' };
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
    const state = this.#state(this.#byOrder.get(ownerKey(posId, orderId)));
    if (operation === 'capture' || operation === 'void' || operation === 'refund') {
      const matching = state.operations.filter(
        (op) =>
          op.method === operation && (transactionId === undefined || op.transaction_id === transactionId),
      );
      const found = matching.at(-1);
      if (!found) throw new FakeServiceError('N-404', 404, `No ${operation} was made on this order.`);
      this.#send(state, found, false);
      return copy(found);
    }
    if (operation !== state.record.method) {
      throw new FakeServiceError('N-404', 404, `This order has no ${operation} operation.`);
    }
    const transactions = [
      { record: state.record, charge: false },
      ...state.charges.map((c) => ({ record: c.record, charge: true })),
    ];
    const found =
      transactionId === undefined
        ? transactions.at(-1)
        : transactions.find((t) => t.record.transaction_id === transactionId);
    if (!found)
      throw new FakeServiceError('N-404', 404, 'No transaction with this transactionId on this order.');
    const record = this.#view(state, found.record);
    // Before the customer acts the service has sent nothing (3.1 shows no status for it): nothing to re-send.
    if (record.status !== STATUS.created.status) this.#send(state, record, found.charge);
    return record;
  }

  /** A payment's current state, or `undefined`. */
  payment(paymentId: string): FakePaymentView | undefined {
    const state = this.#payments.get(paymentId);
    if (!state) return undefined;
    return {
      record: this.#view(state, state.record),
      checkoutId: state.checkoutId,
      operations: copy(state.operations),
      charges: copy(state.charges),
    };
  }

  /** The payment of an order (first project unless `posId`). */
  paymentByOrder(orderId: string, posId: string = this.project.posId): FakePaymentView | undefined {
    const id = this.#byOrder.get(ownerKey(posId, orderId));
    return id === undefined ? undefined : this.payment(id);
  }

  /** A subscription's state, or `undefined`. */
  subscription(subscriptionId: string): FakeSubscriptionView | undefined {
    const subscription = this.#subscriptions.get(subscriptionId);
    if (!subscription) return undefined;
    return {
      id: subscription.id,
      paymentId: subscription.paymentId,
      status: subscription.status,
      plan: copy(subscription.plan),
      charges: copy(this.#state(subscription.paymentId).charges),
    };
  }

  #state(paymentId: string | undefined): PaymentState {
    const state = paymentId === undefined ? undefined : this.#payments.get(paymentId);
    if (!state) throw new FakeServiceError('N-404', 404, 'No such payment.');
    return state;
  }

  #subscription(subscriptionId: string): FakeSubscription {
    const subscription = this.#subscriptions.get(subscriptionId);
    if (!subscription) throw new FakeServiceError('N-404', 404, 'No such subscription.');
    return subscription;
  }

  /** A copy of a record with the subscription's current status. */
  #view(state: PaymentState, record: FakeRecord | PaymentRecord): PaymentRecord {
    const view = copy(record) as PaymentRecord;
    if (state.subscriptionId !== undefined) {
      view.recurring = { id: state.subscriptionId, status: this.#subscription(state.subscriptionId).status };
    }
    return view;
  }

  #attachCard(
    record: FakeRecord,
    request: Readonly<Record<string, unknown>>,
    cardNumber: string | undefined,
  ): void {
    if (cardNumber !== undefined) {
      const token = `tok_${this.#ids.hex(16)}`;
      const year = Number(request.exp_year);
      const fullYear = year < 100 ? 2000 + year : year;
      const month = Number(request.exp_month);
      // The token lives as long as the card: to the end of its expiry month.
      const expiration = formatTimestamp(new Date(Date.UTC(fullYear, month, 0, 23, 59, 59)));
      const mask = maskCard(cardNumber);
      this.#tokens.set(token, { mask, expiration });
      Object.assign(record, { cc_mask: mask, cc_token: token, cc_token_expiration: expiration });
    } else if (typeof request.cc_token === 'string') {
      const known =
        this.#tokens.get(request.cc_token) ?? this.#tokens.get(request.cc_token.replace(/^rcr:/, ''));
      record.cc_token = request.cc_token;
      if (known) Object.assign(record, { cc_mask: known.mask, cc_token_expiration: known.expiration });
    }
    for (const field of CARD_FIELDS) if (field !== 'cc_token') delete record[field];
  }

  #settle(state: PaymentState, action: CheckoutAction, afterThreeDs: boolean): void {
    const { record } = state;
    const now = this.clock.now();
    record.processed_at = formatTimestamp(now);
    record.user_action_required = false;
    delete record.user_action_url;
    if (action === 'pay') {
      Object.assign(record, record.method === 'auth' ? STATUS.authSuccess : STATUS.purchaseSuccess, {
        eci: afterThreeDs ? '05' : '07',
      });
      this.#issueReceipt(record);
      this.#setSubscriptionStatus(state, 'active', now);
    } else {
      Object.assign(record, action === 'decline' ? STATUS.declined : STATUS.failed3ds);
      if (action === 'decline') record.limit_info = this.#limitInfo(now);
      this.#setSubscriptionStatus(state, 'canceled', now);
    }
    this.#notify(state, record);
  }

  #setSubscriptionStatus(state: PaymentState, status: SubscriptionStatus, now: Date): void {
    if (state.subscriptionId === undefined) return;
    const subscription = this.#subscription(state.subscriptionId);
    subscription.status = status;
    if (status === 'active') {
      // Without start_date the schedule counts from the payment's success, not from its creation.
      Object.assign(subscription, scheduleAnchor(subscription.plan, now));
    }
  }

  #limitInfo(now: Date): FakeRecord {
    return {
      retry_after: formatTimestamp(addDuration(now, { days: 1 })),
      description: 'Daily card limit exceeded',
    };
  }

  #operationAmount(state: PaymentState, amount: number | undefined, maximum: number): number {
    if (amount === undefined) return maximum;
    let minor: number;
    try {
      minor = toMinor(amount, state.record.currency as string);
    } catch {
      minor = Number.NaN;
    }
    if (!(minor > 0) || minor > maximum) {
      throw new FakeServiceError(
        'O-422',
        422,
        'The operation amount must be positive and at most what is left.',
      );
    }
    return minor;
  }

  #operation(
    state: PaymentState,
    method: 'capture' | 'void' | 'refund',
    minor: number,
    status: (typeof STATUS)[keyof typeof STATUS],
  ): OperationRecord {
    const { record } = state;
    const currency = record.currency as string;
    const amount = fromMinor(minor, currency);
    const now = formatTimestamp(this.clock.now());
    const operation: OperationRecord = {
      operation_id: this.#ids.uuid(),
      payment_id: record.payment_id as string,
      order_id: record.order_id as string,
      transaction_id: this.#ids.uuid(),
      pos_id: record.pos_id as string,
      mode: 'direct',
      method,
      amount,
      currency,
      ...status,
      ...commission(amount, currency),
      created_at: now,
      processed_at: now,
    };
    if (method === 'refund') this.#issueReceipt(operation);
    state.operations.push(operation);
    this.#send(state, operation, false);
    return copy(operation);
  }

  #notify(state: PaymentState, record: FakeRecord): void {
    this.#send(state, this.#view(state, record), false);
  }

  #send(
    state: PaymentState,
    notification: FakeRecord | PaymentRecord | OperationRecord,
    charge: boolean,
  ): void {
    const plan =
      state.subscriptionId === undefined ? undefined : this.#subscription(state.subscriptionId).plan;
    const url = (charge ? plan?.notification_url : undefined) ?? state.serverUrl;
    if (typeof url === 'string') {
      this.outbox.enqueue(url, notification as Readonly<Record<string, unknown>>, state.project.secret);
    }
  }

  /** Gives `record` a `receipt_url` (spec 2.1's form) that the receipt page answers. */
  #issueReceipt(record: FakeRecord | OperationRecord): void {
    const url = receiptUrl(this.baseUrl, this.#ids);
    this.#receipts.set(url.slice(url.lastIndexOf('/') + 1), record);
    record.receipt_url = url;
  }

  #nextExpiry(): number | undefined {
    let earliest: number | undefined;
    for (const state of this.#payments.values()) {
      const { expiresAt } = state;
      if (expiresAt !== undefined && this.#isOpen(state) && (earliest === undefined || expiresAt < earliest))
        earliest = expiresAt;
    }
    return earliest;
  }

  #isOpen(state: PaymentState): boolean {
    return state.record.status === 'init' || state.record.status === 'pending';
  }

  /** Unpaid hosted payments past `order_timeout` fail with their own code and webhook (docs/assumptions.md). */
  async #expire(now: number): Promise<void> {
    for (const state of this.#payments.values()) {
      if (state.expiresAt === undefined || state.expiresAt > now || !this.#isOpen(state)) continue;
      const { record } = state;
      Object.assign(record, STATUS.expired, {
        processed_at: formatTimestamp(new Date(state.expiresAt)),
        user_action_required: false,
      });
      delete record.user_action_url;
      this.#setSubscriptionStatus(state, 'canceled', new Date(state.expiresAt));
      this.#notify(state, record);
    }
    await this.outbox.idle();
  }

  #nextCharge(): number | undefined {
    let earliest: number | undefined;
    for (const subscription of this.#subscriptions.values()) {
      const event = nextEvent(subscription);
      if (event && (earliest === undefined || event.at < earliest)) earliest = event.at;
    }
    return earliest;
  }

  async #runCharges(now: number): Promise<void> {
    for (;;) {
      let due: { subscription: FakeSubscription; at: number; kind: 'charge' | 'retry' } | undefined;
      for (const subscription of this.#subscriptions.values()) {
        const event = nextEvent(subscription);
        if (event && event.at <= now && (due === undefined || event.at < due.at))
          due = { subscription, ...event };
      }
      if (!due) break;
      this.#charge(due.subscription, due.kind, due.at);
    }
    await this.outbox.idle();
  }

  #charge(subscription: FakeSubscription, kind: 'charge' | 'retry', at: number): void {
    let index: number;
    let attempt: number;
    if (kind === 'charge') {
      index = subscription.nextIndex++;
      attempt = 0;
      // A new scheduled charge supersedes the retries of the previous one.
      subscription.retry = undefined;
    } else {
      index = subscription.retry!.chargeIndex;
      attempt = subscription.retry!.attempt;
      subscription.retry = undefined;
    }
    const state = this.#state(subscription.paymentId);
    const outcome = subscription.outcomes.shift() ?? 'success';
    const date = new Date(at);
    const { plan } = subscription;
    const currency = state.record.currency as string;
    const record: FakeRecord = {
      ...copy(state.record),
      transaction_id: this.#ids.uuid(),
      amount: plan.amount,
      ...commission(plan.amount, currency),
      created_at: formatTimestamp(date),
      processed_at: formatTimestamp(date),
      user_action_required: false,
      recurring: { id: subscription.id, status: subscription.status },
    };
    delete record.user_action_url;
    delete record.limit_info;
    delete record.receipt_url;
    if (outcome === 'success') {
      Object.assign(record, STATUS.purchaseSuccess);
      this.#issueReceipt(record);
    } else {
      Object.assign(record, STATUS.declined, { limit_info: this.#limitInfo(date) });
      if (attempt < plan.retry_attempts) {
        subscription.retry = {
          chargeIndex: index,
          attempt: attempt + 1,
          dueAt: at + plan.retry_interval_hours * 3_600_000,
        };
      }
    }
    state.charges.push({ index, attempt, at: date, record: record as unknown as PaymentRecord });
    this.#send(state, copy(record), true);
  }
}
