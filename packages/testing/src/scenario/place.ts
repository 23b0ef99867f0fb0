import type { FaultSpace, PlacedFault } from './draw.js';
import { kindOf } from './steps.js';
import type {
  Expectations,
  HttpExpectation,
  LedgerExpectation,
  Scenario,
  ScenarioStep,
  StepFaults,
  StepKind,
  WebhookExpectation,
} from './types.js';

/** Steps that may send webhooks of their own (a hosted `create` sends none until it is paid): all but these. */
const SENDS_NONE: ReadonlySet<StepKind> = new Set<StepKind>(['chargeOutcomes', 'release', 'check']);

function causesWebhooks(step: ScenarioStep): boolean {
  if ('create' in step) return step.create.mode !== 'hosted';
  return !SENDS_NONE.has(kindOf(step));
}

/**
 * Where exploration may place faults in `scenario`: its webhook-causing steps.
 *
 * @example
 * faultSpaceOf(loadScenario('three-ds-purchase')); // { steps: [0, 1], length: 2 }
 */
export function faultSpaceOf(scenario: Scenario): FaultSpace {
  const steps: number[] = [];
  scenario.steps.forEach((step, index) => {
    if (causesWebhooks(step)) steps.push(index);
  });
  return { steps, length: scenario.steps.length };
}

/** A delay as a scenario file writes it: `1s`, `1m`, `1h`, else ms. */
function delayOf(ms: number): string | number {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return ms;
}

/**
 * `scenario` with `faults` written into its steps (`faults:` of each step, over any it had), and for a hold a
 * `release: { reverse: true }` step right after the step it is released after: a file `runScenario` and
 * `payhook scenario run` replay as they are.
 *
 * @example
 * const faulty = withFaults(scenario, [{ step: 0, kind: 'duplicate', copies: 1 }]);
 */
export function withFaults(scenario: Scenario, faults: readonly PlacedFault[]): Scenario {
  const steps: ScenarioStep[] = [];
  scenario.steps.forEach((original, index) => {
    const mine = faults.filter((fault) => fault.step === index);
    const added: StepFaults = {};
    for (const fault of mine) {
      if (fault.kind === 'duplicate') added.duplicate = fault.copies;
      else if (fault.kind === 'delay') added.delay = delayOf(fault.ms);
      else if (fault.kind === 'drop') added.drop = true;
      else added.hold = true;
    }
    steps.push(mine.length === 0 ? original : { ...original, faults: { ...original.faults, ...added } });
    for (const fault of faults) {
      if (fault.kind === 'hold' && fault.releaseAfter === index) steps.push({ release: { reverse: true } });
    }
  });
  return { ...scenario, steps };
}

/**
 * `scenario` as exploration runs it. A step's expectations describe the fault-free order (the pending webhook
 * handled before the 3-D Secure step), which a correct app legitimately breaks under a hold or a delay; what it
 * owes under any faults is the end state. So every step expectation moves to the end: each webhook must have been
 * delivered and acknowledged (its `outcome`, `status` and `copies` left out: a late pending is rightly `stale`; its
 * `count` too, which counted the step's own deliveries),
 * and the last ledger expectation of each payment and the last HTTP one of each GET and path hold once every
 * webhook arrived. The scenario's own final `expect` wins where it says the same.
 *
 * @example
 * forExploration(loadScenario('three-ds-purchase')).expect; // webhooks pending and success, the ledger paid
 */
export function forExploration(scenario: Scenario): Scenario {
  const webhooks: WebhookExpectation[] = [];
  const ledger = new Map<string, LedgerExpectation>();
  const http = new Map<string, HttpExpectation>();
  const add = (expectations: Expectations | undefined, relax: boolean) => {
    for (const expected of expectations?.webhooks ?? [])
      webhooks.push(relax ? delivered(expected) : expected);
    for (const expected of expectations?.ledger ?? []) ledger.set(expected.payment, expected);
    for (const expected of expectations?.http ?? []) http.set(`${expected.get} ${expected.json}`, expected);
  };
  const steps = scenario.steps.map((step) => {
    if (step.expect === undefined) return step;
    add(step.expect, true);
    const { expect: _moved, ...rest } = step;
    return rest as ScenarioStep;
  });
  add(scenario.expect, false);
  const expect: Expectations = {
    ...(webhooks.length > 0 ? { webhooks } : {}),
    ...(ledger.size > 0 ? { ledger: [...ledger.values()] } : {}),
    ...(http.size > 0 ? { http: [...http.values()] } : {}),
  };
  return { ...scenario, steps, ...(Object.keys(expect).length > 0 ? { expect } : {}) };
}

/**
 * A step's webhook expectation kept to "delivered and acknowledged" by the end: its `count` was of the step's own
 * window, and its `outcome`, `status` and `copies` are those of the fault-free order.
 */
function delivered({ event, payment }: WebhookExpectation): WebhookExpectation {
  return payment === undefined ? { event } : { event, payment };
}
