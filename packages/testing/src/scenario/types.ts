// The scenario format as TypeScript: what a YAML or JSON scenario file holds (scenarios/scenario.schema.json is the
// same shape for editors), what a run answers. Types only.
import type { PaymentOutcome } from '../fake/outcomes.js';

/**
 * A span of the fake clock: milliseconds, or a number with a unit: `ms`, `s`, `m` (minutes), `h`, `d`, `w`,
 * `mo` (calendar months), `y` (`'10m'`, `'1mo'`, `'90s'`).
 *
 * @example
 * const wait: ScenarioDuration = '10m';
 */
export type ScenarioDuration = string | number;

/**
 * The delivery faults of one step, applied to every webhook that step causes (retries and charges included).
 *
 * @example
 * const faults: StepFaults = { duplicate: 1, delay: '5m' };
 */
export interface StepFaults {
  /** Extra exact copies of each webhook, sent right after it. @default 0 */
  duplicate?: number;
  /** How long (fake clock) each webhook waits before its first attempt; a later step or the run's end sends it. */
  delay?: ScenarioDuration;
  /**
   * Lose each webhook's first attempt on the way: the app never sees it, and the service's retry schedule sends it
   * again (the fake waits 1 min of fake clock; docs/assumptions.md).
   * @default false
   */
  drop?: boolean;
  /** Keep the webhooks in the outbox until a later `release` step. @default false */
  hold?: boolean;
}

/**
 * A card by its test name (`TEST_CARDS`: `success`, `threeDs`, `decline`, `insufficientFunds`) or its number.
 *
 * @example
 * const card: ScenarioCard = 'threeDs';
 */
export type ScenarioCard = 'success' | 'threeDs' | 'decline' | 'insufficientFunds' | (string & {});

/**
 * A subscription's plan (spec 4.5 `init_recurring`), in the scenario's words.
 *
 * @example
 * const plan: ScenarioSubscription = { every: 'month', retryAttempts: 0 };
 */
export interface ScenarioSubscription {
  /** `interval_unit`. */
  every: 'day' | 'week' | 'month' | 'quarter' | 'year';
  /** `interval_count`. @default 1 */
  count?: number;
  /** `retry_attempts`. @default 3 (the service's default) */
  retryAttempts?: number;
  /** `retry_interval_hours`. */
  retryIntervalHours?: number;
  /** The recurring `amount`, when it differs from the first payment's. */
  amount?: number;
}

/**
 * Creates a payment (spec 4.1, 4.2, 4.5) the later steps call by `as`.
 *
 * @example
 * const step: CreateStep = { create: { as: 'order', method: 'auth', amount: 100 } };
 */
export interface CreatePayment {
  /** The name later steps and expectations use for this payment. */
  as: string;
  /** @default 'direct' */
  mode?: 'direct' | 'hosted';
  /** @default 'purchase' */
  method?: 'purchase' | 'auth';
  /** In major units, at most 2 decimals. */
  amount: number;
  /** @default 'UAH' */
  currency?: string;
  /** Direct: the card paid with. @default 'success' */
  card?: ScenarioCard;
  /** The outcome the fake gives this order whatever the card (`setOutcome`). */
  outcome?: PaymentOutcome;
  /** Hosted: `order_timeout`, how long the checkout stays open. */
  expiresIn?: ScenarioDuration;
  /** A split payment (spec 4.2): each sub-merchant's amount. */
  split?: readonly number[];
  /** A subscription (spec 4.5). */
  subscription?: ScenarioSubscription;
  /** More request fields, sent as given (`payload`, `customer_email`…). */
  fields?: Readonly<Record<string, unknown>>;
}

/** Fields every step may carry. */
interface StepCommon {
  /** A label for the timeline; the step's kind and payment otherwise. */
  name?: string;
  /** Delivery faults for the webhooks this step causes. */
  faults?: StepFaults;
  /** Checked once this step's webhooks were delivered. */
  expect?: Expectations;
}

/** @example const step: CreateStep = { create: { as: 'order', amount: 100 } }; */
export interface CreateStep extends StepCommon {
  create: CreatePayment;
}

/** Pays a hosted checkout by card (test name or number) or wallet. @example const step: PayStep = { pay: { payment: 'order', card: 'threeDs' } }; */
export interface PayStep extends StepCommon {
  pay: { payment: string; card?: ScenarioCard; wallet?: 'apple_pay' | 'google_pay' };
}

/** Answers a payment's 3-D Secure page: `THREE_DS_CODE` (the default) passes, any other code fails. @example const step: ThreeDsStep = { threeDs: { payment: 'order' } }; */
export interface ThreeDsStep extends StepCommon {
  threeDs: { payment: string; code?: string };
}

/** Declines an open hosted checkout. @example const step: DeclineStep = { decline: { payment: 'order' } }; */
export interface DeclineStep extends StepCommon {
  decline: { payment: string };
}

/** Captures an authorization, all or `amount`. @example const step: CaptureStep = { capture: { payment: 'order', amount: 40 } }; */
export interface CaptureStep extends StepCommon {
  capture: { payment: string; amount?: number };
}

/** Voids an authorization. @example const step: VoidStep = { void: { payment: 'order' } }; */
export interface VoidStep extends StepCommon {
  void: { payment: string };
}

/** Refunds what is left, or `amount`. @example const step: RefundStep = { refund: { payment: 'order', amount: 25 } }; */
export interface RefundStep extends StepCommon {
  refund: { payment: string; amount?: number };
}

/** Moves the fake clock: charges, expiries, retries and delayed webhooks due on the way run. @example const step: AdvanceStep = { advance: '1mo' }; */
export interface AdvanceStep extends StepCommon {
  advance: ScenarioDuration;
}

/** The outcomes of a subscription's next charges and retries, in order (then success). @example const step: ChargeOutcomesStep = { chargeOutcomes: { payment: 'plan', outcomes: ['decline'] } }; */
export interface ChargeOutcomesStep extends StepCommon {
  chargeOutcomes: { payment: string; outcomes: readonly PaymentOutcome[] };
}

/** Asks the service to re-send an operation's webhook (spec 4.3), as a reconciler does. @example const step: ReconcileStep = { reconcile: { payment: 'order' } }; */
export interface ReconcileStep extends StepCommon {
  reconcile: { payment: string; operation?: string };
}

/**
 * A signed notification the spec does not show: the payment's record (when `payment` is named) with `fields` over
 * it, or `fields` alone.
 *
 * @example
 * const step: InjectStep = { inject: { payment: 'order', fields: { status: 'chargeback' } } };
 */
export interface InjectStep extends StepCommon {
  inject: { payment?: string; fields: Readonly<Record<string, unknown>> };
}

/** The same webhook again, `count` exact copies of a payment's latest one (`redeliver`, `burst`). @example const step: RedeliverStep = { redeliver: { payment: 'order', count: 3 } }; */
export interface RedeliverStep extends StepCommon {
  redeliver: { payment: string; count?: number };
}

/** Sends the webhooks held by `hold`, oldest first or `reverse`. @example const step: ReleaseStep = { release: { reverse: true } }; */
export interface ReleaseStep extends StepCommon {
  release: { reverse?: boolean };
}

/** Only expectations, checked at this point. @example const step: CheckStep = { check: 'after the refund', expect: {} }; */
export interface CheckStep extends StepCommon {
  check: string;
}

/**
 * One step of a scenario: an object with exactly one of the kinds below, plus `name`, `faults`, `expect`.
 *
 * @example
 * const steps: ScenarioStep[] = [{ create: { as: 'order', amount: 100 } }, { refund: { payment: 'order' } }];
 */
export type ScenarioStep =
  | CreateStep
  | PayStep
  | ThreeDsStep
  | DeclineStep
  | CaptureStep
  | VoidStep
  | RefundStep
  | AdvanceStep
  | ChargeOutcomesStep
  | ReconcileStep
  | InjectStep
  | RedeliverStep
  | ReleaseStep
  | CheckStep;

/** The kinds of step, as their key. */
export type StepKind =
  | 'create'
  | 'pay'
  | 'threeDs'
  | 'decline'
  | 'capture'
  | 'void'
  | 'refund'
  | 'advance'
  | 'chargeOutcomes'
  | 'reconcile'
  | 'inject'
  | 'redeliver'
  | 'release'
  | 'check';

/**
 * How the app answered a webhook. `event` is the notification's `method` and `status` (`purchase success`);
 * `outcome` and `status` are those of its first acknowledged (2xx) attempt, `copies` the outcome of every later
 * acknowledged one (copies and redeliveries). `handled` is also met by `queued` (an app with a queue).
 *
 * @example
 * const answered: WebhookExpectation = { event: 'refund success', payment: 'order', outcome: 'handled', copies: 'duplicate' };
 */
export interface WebhookExpectation {
  event: string;
  payment?: string;
  /** payhook's `outcome`: handled, duplicate, stale, conflict, ignored… */
  outcome?: string;
  /** The HTTP status of that answer. */
  status?: number;
  copies?: string;
  /** How many such webhooks. @default at least one */
  count?: number;
}

/**
 * The ledger's entry of a payment (`ledger.get(orderId)`) in the test's process: `state` and any other field of the
 * entry, as `get` answers it.
 *
 * @example
 * const paid: LedgerExpectation = { payment: 'order', state: 'partially_refunded', refundedAmount: 2500 };
 */
export interface LedgerExpectation {
  payment: string;
  state?: string;
  [field: string]: unknown;
}

/**
 * The app's own state over HTTP: a GET of `get` (relative to the target's origin; `{order}` is the order_id of
 * the payment named `order`, `{order.payment_id}` its payment id), the value at `json` (`status`,
 * `$.items[0].state`) equal to `equals`.
 *
 * @example
 * const shown: HttpExpectation = { get: '/orders/{order}', json: 'status', equals: 'paid' };
 */
export interface HttpExpectation {
  get: string;
  json: string;
  equals: unknown;
}

/**
 * What a step (or the whole run) expects.
 *
 * @example
 * const expectations: Expectations = { webhooks: [{ event: 'purchase success', outcome: 'handled' }] };
 */
export interface Expectations {
  webhooks?: readonly WebhookExpectation[];
  ledger?: readonly LedgerExpectation[];
  http?: readonly HttpExpectation[];
}

/**
 * A whole payment life: steps over the fake service, faults, and what the app must have answered.
 *
 * @example
 * const scenario: Scenario = { name: 'refund', steps: [{ create: { as: 'order', amount: 100 } }] };
 */
export interface Scenario {
  /** Letters, digits and `-`: names the built-in and prefixes the order ids. */
  name: string;
  description?: string;
  /** The fake clock's start. @default '2026-01-01T09:00:00Z' */
  start?: string;
  steps: readonly ScenarioStep[];
  /** Checked at the end, once every webhook due was delivered (delays, retries). */
  expect?: Expectations;
}

/**
 * Where and how a scenario runs.
 *
 * @example
 * const options: RunScenarioOptions = { target: 'http://127.0.0.1:3000/webhooks', secret: 'whsec', seed: 7 };
 */
export interface RunScenarioOptions {
  /** The app's webhook URL: every webhook is POSTed there. */
  target: string;
  /** Seeds the fake's ids; the same seed gives the same timeline. @default 1 */
  seed?: number;
  /** The secret webhooks are signed with (the app's). @default 'payhook-scenario-secret' */
  secret?: string;
  /** The app's ledger when it runs in the test's process: `expect.ledger` reads it. */
  ledger?: { get(orderId: string): Promise<object | undefined> };
  /** How webhooks and `expect.http` GETs are sent (an in-process app's `fetch`). @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

/**
 * An expectation the run did not meet, or a step that could not run.
 *
 * @example
 * const failure: ScenarioFailure = { step: 2, kind: 'webhook', message: 'refund success: answered duplicate, expected handled' };
 */
export interface ScenarioFailure {
  /** The step's index (0-based), absent for the final expectations. */
  step?: number;
  kind: 'webhook' | 'ledger' | 'http' | 'step';
  message: string;
}

/**
 * One line of a run's timeline: a step, a delivery attempt or a failed expectation, each at its fake-clock time.
 *
 * @example
 * const line: TimelineEntry = { type: 'step', index: 0, at: '2026-01-01T09:00:00.000Z', what: 'create order' };
 */
export type TimelineEntry =
  | { type: 'step'; index: number; at: string; what: string }
  | {
      type: 'delivery';
      at: string;
      webhook: number;
      attempt: number;
      copy: boolean;
      event: string;
      order: string;
      status?: number;
      outcome?: string;
      error?: string;
    }
  | { type: 'failure'; at: string; step?: number; kind: ScenarioFailure['kind']; message: string };

/**
 * What a run answers: whether every expectation held, the failures, and the timeline.
 *
 * @example
 * const run: ScenarioRun = await runScenario('three-ds-purchase', { target, secret });
 * if (!run.passed) console.log(formatTimeline(run));
 */
export interface ScenarioRun {
  scenario: Scenario;
  seed: number;
  passed: boolean;
  failures: ScenarioFailure[];
  timeline: TimelineEntry[];
}
