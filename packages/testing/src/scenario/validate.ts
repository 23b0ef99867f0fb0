import { toDuration, toMilliseconds } from './duration.js';
import { COMMON_KEYS, STEP_KINDS } from './steps.js';
import type { Scenario, StepKind } from './types.js';

/**
 * A scenario file refused: `message` names the file's place (`steps[2].refund.amount`) and what is wrong.
 *
 * @example
 * try { loadScenario('broken.yaml'); } catch (error) { if (error instanceof ScenarioError) console.log(error.message); }
 */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
  /** Each problem, one line each (`steps[2] (refund): amount must be …`). */
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(`[@payhook/testing] ${source} is not a valid scenario:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

type Check = (value: unknown) => string | undefined;

const OUTCOMES = ['success', '3ds', 'decline', 'insufficient_funds'];
const UNITS = ['day', 'week', 'month', 'quarter', 'year'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (value: unknown) => JSON.stringify(value) ?? String(value);

const text: Check = (v) =>
  typeof v === 'string' && v !== '' ? undefined : `must be a non-empty string, not ${shown(v)}`;
const flag: Check = (v) => (typeof v === 'boolean' ? undefined : `must be true or false, not ${shown(v)}`);
const count: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0 ? undefined : `must be a whole number ≥ 0, not ${shown(v)}`;
const positiveCount: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 1 ? undefined : `must be a whole number ≥ 1, not ${shown(v)}`;
const amount: Check = (v) =>
  typeof v === 'number' && v > 0 && Math.abs(Math.round(v * 100) - v * 100) < 1e-6
    ? undefined
    : `must be a positive amount with at most 2 decimals, not ${shown(v)}`;
const duration: Check = (v) =>
  (typeof v === 'string' || typeof v === 'number') && toDuration(v) !== undefined
    ? undefined
    : `must be a duration such as 10m, 2h, 1d, 1mo or a number of ms, not ${shown(v)}`;
const delay: Check = (v) =>
  (typeof v === 'string' || typeof v === 'number') && toMilliseconds(v) !== undefined
    ? undefined
    : `must be a duration in ms, s, m, h, d or w (or a number of ms), not ${shown(v)}`;
const oneOf =
  (values: readonly string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v)
      ? undefined
      : `must be one of ${values.join(', ')}, not ${shown(v)}`;
const record: Check = (v) => (isObject(v) ? undefined : `must be an object of fields, not ${shown(v)}`);
const listOf =
  (item: Check, nonEmpty = true): Check =>
  (v) => {
    if (!Array.isArray(v) || (nonEmpty && v.length === 0)) return `must be a non-empty list, not ${shown(v)}`;
    for (const [i, element] of v.entries()) {
      const problem = item(element);
      if (problem) return `[${i}] ${problem}`;
    }
    return undefined;
  };

interface Shape {
  readonly required?: Readonly<Record<string, Check>>;
  readonly optional?: Readonly<Record<string, Check>>;
}

function checkShape(value: unknown, shape: Shape, at: string, problems: string[]): void {
  if (!isObject(value)) {
    problems.push(`${at} must be an object, not ${shown(value)}`);
    return;
  }
  const known = { ...shape.required, ...shape.optional };
  for (const key of Object.keys(value)) {
    if (!(key in known))
      problems.push(`${at}: unknown field "${key}" (known: ${Object.keys(known).join(', ')})`);
  }
  for (const [key, check] of Object.entries(known)) {
    if (value[key] === undefined) {
      if (shape.required && key in shape.required) problems.push(`${at}: "${key}" is required`);
      continue;
    }
    const problem = check(value[key]);
    if (problem) problems.push(`${at}.${key} ${problem}`);
  }
}

const shaped =
  (shape: Shape): Check =>
  (v) => {
    const problems: string[] = [];
    checkShape(v, shape, '', problems);
    return problems.length > 0 ? problems.join('; ') : undefined;
  };

const SUBSCRIPTION: Shape = {
  required: { every: oneOf(UNITS) },
  optional: { count: positiveCount, retryAttempts: count, retryIntervalHours: positiveCount, amount },
};
const subscription = shaped(SUBSCRIPTION);

const payment = { payment: text };

/** The body of each kind of step. `advance` and `check` take a value, not an object. */
const STEP_SHAPES: Readonly<Record<Exclude<StepKind, 'advance' | 'check'>, Shape>> = {
  create: {
    required: { as: text, amount },
    optional: {
      mode: oneOf(['direct', 'hosted']),
      method: oneOf(['purchase', 'auth']),
      currency: text,
      card: text,
      outcome: oneOf(OUTCOMES),
      expiresIn: duration,
      split: listOf(amount),
      subscription,
      fields: record,
    },
  },
  pay: { required: payment, optional: { card: text, wallet: oneOf(['apple_pay', 'google_pay']) } },
  threeDs: { required: payment, optional: { code: text } },
  decline: { required: payment },
  capture: { required: payment, optional: { amount } },
  void: { required: payment },
  refund: { required: payment, optional: { amount } },
  chargeOutcomes: { required: { ...payment, outcomes: listOf(oneOf(OUTCOMES)) } },
  reconcile: { required: payment, optional: { operation: text } },
  inject: { required: { fields: record }, optional: payment },
  redeliver: { required: payment, optional: { count: positiveCount } },
  release: { optional: { reverse: flag } },
};

const FAULTS: Shape = { optional: { duplicate: count, delay, drop: flag, hold: flag } };

const WEBHOOK: Shape = {
  required: { event: text },
  optional: { payment: text, outcome: text, status: positiveCount, copies: text, count },
};
const HTTP: Shape = { required: { get: text, json: text, equals: () => undefined } };

const EXPECTATIONS: Shape = {
  optional: {
    webhooks: listOf(shaped(WEBHOOK)),
    ledger: listOf((v) =>
      isObject(v) && typeof v.payment === 'string' ? undefined : `needs "payment", not ${shown(v)}`,
    ),
    http: listOf(shaped(HTTP)),
  },
};

/**
 * The fields the validator knows, by place: each step kind's body (`advance` and `check` take a value), `faults`,
 * and each kind of expectation. The schema test holds the JSON Schema and the TypeScript types to these.
 */
export function knownFields(): Record<string, string[]> {
  const keys = (shape: Shape) => Object.keys({ ...shape.required, ...shape.optional });
  return {
    ...Object.fromEntries(Object.entries(STEP_SHAPES).map(([kind, shape]) => [kind, keys(shape)])),
    faults: keys(FAULTS),
    expect: keys(EXPECTATIONS),
    webhooks: keys(WEBHOOK),
    http: keys(HTTP),
    subscription: keys(SUBSCRIPTION),
  };
}

function checkStep(step: unknown, at: string, names: Set<string>, problems: string[]): StepKind | undefined {
  if (!isObject(step)) {
    problems.push(`${at} must be an object with one of ${STEP_KINDS.join(', ')}, not ${shown(step)}`);
    return undefined;
  }
  const kinds = STEP_KINDS.filter((kind) => kind in step);
  if (kinds.length !== 1) {
    const keys = Object.keys(step).filter((key) => !COMMON_KEYS.includes(key));
    problems.push(
      kinds.length === 0
        ? `${at} has no step kind (got ${keys.map((k) => `"${k}"`).join(', ') || 'nothing'}; expected one of ${STEP_KINDS.join(', ')})`
        : `${at} has several step kinds (${kinds.join(', ')}): one per step`,
    );
    return undefined;
  }
  const kind = kinds[0]!;
  const where = `${at} (${kind})`;
  for (const key of Object.keys(step)) {
    if (key !== kind && !COMMON_KEYS.includes(key)) problems.push(`${where}: unknown field "${key}"`);
  }
  if (step.name !== undefined && typeof step.name !== 'string')
    problems.push(`${where}.name must be a string`);
  if (step.faults !== undefined) checkShape(step.faults, FAULTS, `${where}.faults`, problems);
  if (step.expect !== undefined) checkShape(step.expect, EXPECTATIONS, `${where}.expect`, problems);
  const body = step[kind];
  if (kind === 'advance') {
    const problem = duration(body);
    if (problem) problems.push(`${where} ${problem}`);
  } else if (kind === 'check') {
    const problem = text(body);
    if (problem) problems.push(`${where} ${problem}`);
  } else {
    checkShape(body, STEP_SHAPES[kind], `${where}`, problems);
  }
  if (isObject(body)) {
    if (kind === 'create' && typeof body.as === 'string') {
      if (names.has(body.as)) problems.push(`${where}: a payment named "${body.as}" already exists`);
      names.add(body.as);
    } else if (typeof body.payment === 'string' && !names.has(body.payment)) {
      problems.push(`${where}: no payment named "${body.payment}" was created before this step`);
    }
  }
  return kind;
}

/**
 * Checks a parsed scenario file and answers it typed, or throws a `ScenarioError` listing every problem with the
 * step and field it is in (`steps[1] (capture).amount must be a positive amount …`).
 */
export function validateScenario(value: unknown, source = 'the scenario'): Scenario {
  const problems: string[] = [];
  if (!isObject(value))
    throw new ScenarioError(source, [`must be an object with "name" and "steps", not ${shown(value)}`]);
  for (const key of Object.keys(value)) {
    if (!['name', 'description', 'start', 'steps', 'expect', '$schema'].includes(key)) {
      problems.push(`unknown top-level field "${key}" (known: name, description, start, steps, expect)`);
    }
  }
  if (typeof value.name !== 'string' || !/^[a-z0-9][a-z0-9-]*$/i.test(value.name)) {
    problems.push(`"name" must be letters, digits and "-", not ${shown(value.name)}`);
  }
  if (value.description !== undefined && typeof value.description !== 'string')
    problems.push('"description" must be a string');
  if (
    value.start !== undefined &&
    (typeof value.start !== 'string' || Number.isNaN(Date.parse(value.start)))
  ) {
    problems.push(`"start" must be an ISO date-time such as 2026-01-01T09:00:00Z, not ${shown(value.start)}`);
  }
  const names = new Set<string>();
  let holding = -1;
  if (!Array.isArray(value.steps) || value.steps.length === 0) {
    problems.push(`"steps" must be a non-empty list, not ${shown(value.steps)}`);
  } else {
    value.steps.forEach((step, i) => {
      const kind = checkStep(step, `steps[${i}]`, names, problems);
      if (isObject(step) && isObject(step.faults) && step.faults.hold === true && holding < 0) holding = i;
      if (kind === 'release') holding = -1;
    });
  }
  if (holding >= 0)
    problems.push(
      `steps[${holding}] holds its webhooks but no later step releases them (add { release: {} })`,
    );
  if (value.expect !== undefined) checkShape(value.expect, EXPECTATIONS, 'expect', problems);
  for (const expectation of collectPayments(value)) {
    if (!names.has(expectation.name))
      problems.push(`${expectation.at}: no payment named "${expectation.name}"`);
  }
  if (problems.length > 0) throw new ScenarioError(source, problems);
  return value as unknown as Scenario;
}

/** Every payment an expectation names, with where. */
function collectPayments(value: Record<string, unknown>): { name: string; at: string }[] {
  const found: { name: string; at: string }[] = [];
  const scan = (expect: unknown, at: string) => {
    if (!isObject(expect)) return;
    for (const list of ['webhooks', 'ledger'] as const) {
      const entries = expect[list];
      if (!Array.isArray(entries)) continue;
      entries.forEach((entry, i) => {
        if (isObject(entry) && typeof entry.payment === 'string') {
          found.push({ name: entry.payment, at: `${at}.${list}[${i}]` });
        }
      });
    }
  };
  if (Array.isArray(value.steps)) {
    for (const [i, step] of value.steps.entries())
      if (isObject(step)) scan(step.expect, `steps[${i}].expect`);
  }
  scan(value.expect, 'expect');
  return found;
}
