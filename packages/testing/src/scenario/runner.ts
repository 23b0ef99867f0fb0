import { FakeServiceError } from '../fake/errors.js';
import type { DeliveryAttempt, DeliveryFaults } from '../fake/outbox.js';
import { TEST_CARDS, THREE_DS_CODE } from '../fake/outcomes.js';
import { FakeService } from '../fake/service.js';
import { fetchTransportOver } from '../fake/transport.js';
import { burst, redeliver } from '../scenarios.js';
import { toDuration, toMilliseconds } from './duration.js';
import {
  type CheckContext,
  checkExpectations,
  eventOf,
  type NamedPayment,
  outcomeOf,
} from './expectations.js';
import { loadScenario } from './load.js';
import { describeStep, kindOf } from './steps.js';
import type {
  CreatePayment,
  RunScenarioOptions,
  Scenario,
  ScenarioCard,
  ScenarioFailure,
  ScenarioRun,
  ScenarioStep,
  StepFaults,
  TimelineEntry,
} from './types.js';
import { validateScenario } from './validate.js';

/** Where every scenario's fake clock starts unless it says otherwise. */
const DEFAULT_START = '2026-01-01T09:00:00Z';
const DEFAULT_SECRET = 'payhook-scenario-secret';
/** How many times the end of a run moves the clock to the outbox's next webhook (retries and delays) at most. */
const SETTLE_MOVES = 10_000;

/** The seed of the fake's ids: the run's seed mixed with the scenario's name, so two scenarios never share ids. */
function fakeSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return (hash ^ Math.imul(seed, 0x9e3779b1)) >>> 0 || 1;
}

function cardNumber(card: ScenarioCard | undefined): string {
  if (card === undefined) return TEST_CARDS.success;
  return (TEST_CARDS as Record<string, string>)[card] ?? card.replace(/[\s-]/g, '');
}

function deliveryFaults(faults: StepFaults | undefined): DeliveryFaults {
  if (!faults) return {};
  return {
    ...(faults.duplicate ? { duplicate: faults.duplicate } : {}),
    ...(faults.delay !== undefined ? { delayMs: toMilliseconds(faults.delay) ?? 0 } : {}),
    ...(faults.drop ? { loseFirstAttempt: true } : {}),
    ...(faults.hold ? { hold: true } : {}),
  };
}

/** One run: the fake, the payments by name, what was seen so far. */
class Run {
  readonly fake: FakeService;
  readonly payments = new Map<string, NamedPayment>();
  readonly timeline: TimelineEntry[] = [];
  readonly failures: ScenarioFailure[] = [];
  /** Webhooks sent by `inject`: an app may refuse them, so they need not be acknowledged. */
  readonly injected = new Set<number>();
  readonly unacknowledged = new Set<number>();
  #seen = 0;
  readonly #year: number;

  constructor(
    readonly scenario: Scenario,
    readonly seed: number,
    readonly options: RunScenarioOptions,
    readonly secret: string,
    readonly fetch: typeof globalThis.fetch,
  ) {
    const start = scenario.start ?? DEFAULT_START;
    this.fake = new FakeService({
      secret,
      now: start,
      seed: fakeSeed(seed, scenario.name),
      fixedIds: true,
      transport: fetchTransportOver(fetch),
    });
    this.#year = new Date(start).getUTCFullYear();
  }

  now(): string {
    return this.fake.clock.now().toISOString();
  }

  named(name: string): NamedPayment {
    const payment = this.payments.get(name);
    if (!payment) throw new Error(`no payment named "${name}"`);
    return payment;
  }

  checkoutOf(name: string): string {
    return this.fake.payment(this.named(name).paymentId)!.checkoutId;
  }

  /** The attempts made since the last call, added to the timeline. */
  takeAttempts(): DeliveryAttempt[] {
    const fresh = this.fake.deliveries.slice(this.#seen);
    this.#seen = this.fake.deliveries.length;
    for (const attempt of fresh) {
      const outcome = outcomeOf(attempt.body);
      this.timeline.push({
        type: 'delivery',
        at: attempt.at.toISOString(),
        webhook: attempt.webhookId,
        attempt: attempt.attempt,
        copy: attempt.duplicate,
        event: eventOf(attempt.notification),
        order: String(attempt.notification.order_id),
        ...(attempt.status !== undefined ? { status: attempt.status } : {}),
        ...(outcome !== undefined ? { outcome } : {}),
        ...(attempt.error !== undefined ? { error: attempt.error } : {}),
      });
    }
    return fresh;
  }

  fail(failure: ScenarioFailure): void {
    this.failures.push(failure);
    this.timeline.push({ type: 'failure', at: this.now(), ...failure });
  }

  context(attempts: readonly DeliveryAttempt[]): CheckContext {
    return {
      attempts,
      payments: this.payments,
      target: this.options.target,
      fetch: this.fetch,
      ledger: this.options.ledger,
      unacknowledged: this.unacknowledged,
    };
  }

  create(create: CreatePayment): void {
    const orderId = `${this.scenario.name}-${create.as}-s${this.seed}`;
    const mode = create.mode ?? 'direct';
    const method = create.method ?? 'purchase';
    if (create.outcome) this.fake.setOutcome({ orderId }, create.outcome);
    const body: Record<string, unknown> = {
      pos_id: this.fake.project.posId,
      mode,
      method,
      amount: create.amount,
      currency: create.currency ?? 'UAH',
      description: `${this.scenario.name}: ${create.as}`,
      order_id: orderId,
      order_3ds_bypass: 'supported',
      server_url: this.options.target,
      customer_fname: 'Ada',
      customer_lname: 'Lovelace',
      customer_email: 'ada@example.com',
      customer_phone: '+380501234567',
      customer_ip: '203.0.113.7',
    };
    if (mode === 'direct') {
      Object.assign(body, {
        cc_number: cardNumber(create.card),
        exp_month: 12,
        exp_year: this.#year + 3,
        card_cvv: '123',
      });
    }
    if (create.expiresIn !== undefined) {
      body.order_timeout = Math.round((toMilliseconds(create.expiresIn) ?? 0) / 1000);
    }
    if (create.split) {
      body.split = create.split.map((amount, i) => ({
        amount,
        sub_merchant_id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      }));
    }
    if (create.subscription) {
      const plan = create.subscription;
      body.init_recurring = {
        interval_unit: plan.every,
        interval_count: plan.count ?? 1,
        ...(plan.retryAttempts !== undefined ? { retry_attempts: plan.retryAttempts } : {}),
        ...(plan.retryIntervalHours !== undefined ? { retry_interval_hours: plan.retryIntervalHours } : {}),
        ...(plan.amount !== undefined ? { amount: plan.amount } : {}),
      };
    }
    Object.assign(body, create.fields);
    const created = this.fake.createPayment(body, { split: create.split !== undefined });
    const paymentId = created.mode === 'direct' ? String(created.record.payment_id) : created.paymentId;
    const recurring = this.fake.payment(paymentId)?.record.recurring as { id?: string } | undefined;
    this.payments.set(create.as, {
      orderId,
      paymentId,
      method,
      ...(recurring?.id ? { subscriptionId: recurring.id } : {}),
    });
  }

  /** Does what the step says to the fake; its webhooks are queued (or held, delayed, lost) as its faults say. */
  async act(step: ScenarioStep): Promise<void> {
    const fake = this.fake;
    const card = (value: ScenarioCard | undefined) => ({
      number: cardNumber(value),
      expMonth: 12,
      expYear: this.#year + 3,
      cvv: '123',
      holder: 'Ada Lovelace',
    });
    if ('create' in step) this.create(step.create);
    else if ('pay' in step) {
      const checkout = this.checkoutOf(step.pay.payment);
      if (step.pay.wallet) fake.payByWallet(checkout, step.pay.wallet);
      else fake.payByCard(checkout, card(step.pay.card));
    } else if ('threeDs' in step) {
      fake.confirmThreeDs(this.checkoutOf(step.threeDs.payment), step.threeDs.code ?? THREE_DS_CODE);
    } else if ('decline' in step) fake.completeCheckout(this.checkoutOf(step.decline.payment), 'decline');
    else if ('capture' in step) fake.capture(this.named(step.capture.payment).paymentId, step.capture.amount);
    else if ('void' in step) fake.void(this.named(step.void.payment).paymentId);
    else if ('refund' in step) fake.refund(this.named(step.refund.payment).paymentId, step.refund.amount);
    else if ('advance' in step) await fake.clock.advanceBy(toDuration(step.advance) ?? 0);
    else if ('chargeOutcomes' in step) {
      const named = this.named(step.chargeOutcomes.payment);
      if (!named.subscriptionId) throw new Error(`${step.chargeOutcomes.payment} is not a subscription`);
      fake.queueChargeOutcomes(named.subscriptionId, step.chargeOutcomes.outcomes);
    } else if ('reconcile' in step) {
      const named = this.named(step.reconcile.payment);
      fake.resend(fake.project.posId, named.orderId, step.reconcile.operation ?? named.method);
    } else if ('inject' in step) {
      const named = step.inject.payment === undefined ? undefined : this.named(step.inject.payment);
      const record = named ? fake.payment(named.paymentId)!.record : {};
      this.injected.add(
        fake.outbox.enqueue(this.options.target, { ...record, ...step.inject.fields }, this.secret),
      );
    } else if ('redeliver' in step) {
      const named = this.named(step.redeliver.payment);
      const last = fake.deliveries.findLast((attempt) => attempt.notification.order_id === named.orderId);
      if (!last) throw new Error(`no webhook of ${step.redeliver.payment} was delivered yet to send again`);
      for (const copy of burst(redeliver(last.notification), step.redeliver.count ?? 1)) {
        fake.outbox.enqueue(last.url, copy, this.secret);
      }
    } else if ('release' in step) await fake.outbox.resume({ reverse: step.release.reverse === true });
    await fake.idle();
  }
}

/**
 * Runs the fake clock on until nothing is left to send in the outbox (retries, delays): a delayed webhook arrives
 * however long its delay. Charges due on the way run too, as they would.
 */
async function settle(fake: FakeService): Promise<void> {
  for (let moves = 0; moves < SETTLE_MOVES; moves++) {
    const next = fake.outbox.next();
    if (next === undefined) break;
    await fake.clock.advanceTo(Math.max(next, fake.clock.now().getTime()));
  }
  await fake.idle();
}

/** One step: its webhooks, with its faults, and its expectations; false when the step could not run (the run stops). */
async function runStep(run: Run, step: ScenarioStep, index: number): Promise<boolean> {
  run.timeline.push({ type: 'step', index, at: run.now(), what: describeStep(step) });
  run.fake.setDeliveryFaults(deliveryFaults(step.faults));
  try {
    await run.act(step);
  } catch (error) {
    const why =
      error instanceof FakeServiceError
        ? `${error.code} ${error.message}`
        : String((error as Error)?.message ?? error);
    run.takeAttempts();
    run.fail({ step: index, kind: 'step', message: `${kindOf(step)} could not run: ${why}` });
    return false;
  } finally {
    run.fake.setDeliveryFaults({});
  }
  const attempts = run.takeAttempts();
  for (const failure of await checkExpectations(step.expect, run.context(attempts), index)) run.fail(failure);
  return true;
}

/** The end of a run: the scenario's own expectations, then every webhook acknowledged once and none left held. */
async function checkEnd(run: Run, scenario: Scenario): Promise<void> {
  for (const failure of await checkExpectations(
    scenario.expect,
    run.context(run.fake.deliveries),
    undefined,
  )) {
    run.fail(failure);
  }
  for (const line of run.fake.outbox.undelivered()) {
    const id = Number(/^webhook #(\d+)/.exec(line)?.[1]);
    if (!run.injected.has(id) && !run.unacknowledged.has(id)) {
      run.fail({ kind: 'webhook', message: line.replace(/ to \S+/, '') });
    }
  }
  for (const line of run.fake.outbox.unexpectedDuplicates()) {
    run.fail({ kind: 'webhook', message: line.replace(/ to \S+/, '') });
  }
  if (run.fake.outbox.held > 0)
    run.fail({ kind: 'step', message: `${run.fake.outbox.held} webhook(s) held and never released` });
}

/**
 * Runs a scenario (an object, a built-in's name or a file) against the app at `target`: a seeded in-process fake
 * service on a test clock (fixed start, fixed ids) whose webhooks are POSTed to `target`, each step's faults
 * applied, each expectation checked. No real time passes: delays, retries and clock moves run on the fake clock, so
 * the same seed gives the same timeline.
 * @throws {ScenarioError} when the scenario is not a valid one (each problem named by its step and field).
 *
 * @example
 * const run = await runScenario('three-ds-purchase', { target: `${url}/webhooks`, secret: 'whsec', seed: 7 });
 * expect(run.failures).toEqual([]);
 */
export async function runScenario(
  scenario: Scenario | string,
  options: RunScenarioOptions,
): Promise<ScenarioRun> {
  // An object is checked as a file is: a scenario built in code (or by an explorer) fails with its step named.
  const resolved =
    typeof scenario === 'string'
      ? loadScenario(scenario)
      : validateScenario(scenario, `scenario ${JSON.stringify(scenario.name)}`);
  const seed = options.seed ?? 1;
  const run = new Run(
    resolved,
    seed,
    options,
    options.secret ?? DEFAULT_SECRET,
    options.fetch ?? globalThis.fetch,
  );
  let stopped = false;
  for (const [index, step] of resolved.steps.entries()) {
    stopped = !(await runStep(run, step, index));
    if (stopped) break;
  }
  await settle(run.fake);
  run.takeAttempts();
  if (!stopped) await checkEnd(run, resolved);
  return {
    scenario: resolved,
    seed,
    passed: run.failures.length === 0,
    failures: run.failures,
    timeline: run.timeline,
  };
}
