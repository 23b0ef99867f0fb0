import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { builtInScenarios } from './builtins.js';
import { defineScenario } from './define.js';
import { loadScenario, parseScenario, serializeScenario } from './load.js';
import { STEP_KINDS } from './steps.js';
import type {
  CaptureStep,
  ChargeOutcomesStep,
  CreatePayment,
  DeclineStep,
  Expectations,
  HttpExpectation,
  InjectStep,
  PayStep,
  ReconcileStep,
  RedeliverStep,
  RefundStep,
  ReleaseStep,
  Scenario,
  ScenarioSubscription,
  StepFaults,
  ThreeDsStep,
  VoidStep,
  WebhookExpectation,
} from './types.js';
import { knownFields, ScenarioError, validateScenario } from './validate.js';

const SCHEMA_URL = new URL('../../scenarios/scenario.schema.json', import.meta.url);
interface SchemaObject {
  properties?: Record<string, SchemaObject>;
  items?: SchemaObject;
  required?: string[];
  $ref?: string;
}
const schema = JSON.parse(readFileSync(SCHEMA_URL, 'utf8')) as SchemaObject & {
  $defs: Record<string, SchemaObject> & { step: { oneOf: (SchemaObject & { required: string[] })[] } };
};

/**
 * Each place's field names as the TypeScript types have them: `Fields<T>` accepts exactly the keys of `T`, so a
 * field added to a type and not listed here (or listed and not in the type) fails to compile.
 */
type Fields<T> = readonly (keyof T)[] & { readonly length: number };
function fields<T>() {
  return <const L extends readonly (keyof T)[]>(
    list: L & ([keyof T] extends [L[number]] ? unknown : never),
  ) => list as Fields<T> as readonly string[];
}
const TYPED_FIELDS: Record<string, readonly string[]> = {
  create: fields<CreatePayment>()([
    'as',
    'mode',
    'method',
    'amount',
    'currency',
    'card',
    'outcome',
    'expiresIn',
    'split',
    'subscription',
    'fields',
  ]),
  pay: fields<PayStep['pay']>()(['payment', 'card', 'wallet']),
  threeDs: fields<ThreeDsStep['threeDs']>()(['payment', 'code']),
  decline: fields<DeclineStep['decline']>()(['payment']),
  capture: fields<CaptureStep['capture']>()(['payment', 'amount']),
  void: fields<VoidStep['void']>()(['payment']),
  refund: fields<RefundStep['refund']>()(['payment', 'amount']),
  chargeOutcomes: fields<ChargeOutcomesStep['chargeOutcomes']>()(['payment', 'outcomes']),
  reconcile: fields<ReconcileStep['reconcile']>()(['payment', 'operation']),
  inject: fields<InjectStep['inject']>()(['payment', 'fields']),
  redeliver: fields<RedeliverStep['redeliver']>()(['payment', 'count']),
  release: fields<ReleaseStep['release']>()(['reverse']),
  faults: fields<StepFaults>()(['duplicate', 'delay', 'drop', 'hold']),
  expect: fields<Expectations>()(['webhooks', 'ledger', 'http']),
  webhooks: fields<WebhookExpectation>()(['event', 'payment', 'outcome', 'status', 'copies', 'count']),
  http: fields<HttpExpectation>()(['get', 'json', 'equals']),
  subscription: fields<ScenarioSubscription>()([
    'every',
    'count',
    'retryAttempts',
    'retryIntervalHours',
    'amount',
  ]),
};

/** Each place's field names as the JSON Schema has them. */
function schemaFields(): Record<string, string[]> {
  const keys = (object: SchemaObject | undefined) => Object.keys(object?.properties ?? {});
  const steps = Object.fromEntries(
    schema.$defs.step.oneOf
      .filter((step) => !['advance', 'check'].includes(step.required[0]!))
      .map((step) => [step.required[0]!, keys(step.properties?.[step.required[0]!])]),
  );
  const expectations = schema.$defs.expectations!;
  return {
    ...steps,
    faults: keys(schema.$defs.faults),
    expect: keys(expectations),
    webhooks: keys(expectations.properties!.webhooks!.items),
    http: keys(expectations.properties!.http!.items),
    subscription: keys(
      schema.$defs.step.oneOf.find((s) => s.required[0] === 'create')!.properties!.create!.properties!
        .subscription,
    ),
  };
}

const sorted = (record: Record<string, readonly string[]>): Record<string, string[]> =>
  Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, [...record[key]!].sort()]),
  );

const validateWithSchema = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

/** Every kind of step once, typed: what the TypeScript types accept, the schema and the validator accept too. */
const EVERY_KIND: Scenario = defineScenario({
  name: 'every-kind',
  description: 'each step kind once',
  start: '2026-03-01T10:00:00Z',
  steps: [
    {
      create: {
        as: 'a',
        amount: 10,
        method: 'auth',
        card: 'threeDs',
        outcome: '3ds',
        fields: { payload: 'x' },
      },
    },
    { create: { as: 'h', mode: 'hosted', amount: 10, expiresIn: '15m', split: [6, 4] } },
    {
      create: {
        as: 's',
        amount: 9.99,
        subscription: { every: 'month', count: 1, retryAttempts: 0, retryIntervalHours: 24, amount: 5 },
      },
    },
    { pay: { payment: 'h', card: 'success' }, faults: { duplicate: 1, delay: '5m', drop: true, hold: true } },
    { release: { reverse: true } },
    { threeDs: { payment: 'a', code: '000000' } },
    { decline: { payment: 'h' } },
    { capture: { payment: 'a', amount: 5 } },
    { void: { payment: 'a' } },
    { refund: { payment: 'h', amount: 1 } },
    { advance: '1mo', name: 'a month' },
    { chargeOutcomes: { payment: 's', outcomes: ['success', 'decline'] } },
    { reconcile: { payment: 'a', operation: 'auth' } },
    { inject: { fields: { method: 'chargeback' } } },
    { redeliver: { payment: 'a', count: 2 } },
    {
      check: 'the end',
      expect: {
        webhooks: [
          {
            event: 'auth success',
            payment: 'a',
            outcome: 'handled',
            status: 200,
            copies: 'duplicate',
            count: 1,
          },
        ],
        ledger: [{ payment: 'a', state: 'voided' }],
        http: [{ get: '/orders/{a}', json: 'status', equals: 'success' }],
      },
    },
  ],
  expect: { webhooks: [{ event: 'void success' }] },
});

/** Invalid files: the validator's message (step and field), and the schema refuses each too. */
const INVALID: [string, string, string][] = [
  ['no steps', 'name: x\nsteps: []\n', '"steps" must be a non-empty list, not []'],
  [
    'an unknown step kind',
    'name: x\nsteps:\n  - create: { as: o, amount: 1 }\n  - chargeback: { payment: o }\n',
    'steps[1] has no step kind (got "chargeback"; expected one of create, pay, threeDs, decline, capture, void, refund, advance, chargeOutcomes, reconcile, inject, redeliver, release, check)',
  ],
  [
    'an amount with 3 decimals',
    'name: x\nsteps:\n  - create: { as: o, amount: 1.005 }\n',
    'steps[0] (create).amount must be a positive amount with at most 2 decimals, not 1.005',
  ],
  [
    'a delay in months',
    'name: x\nsteps:\n  - create: { as: o, amount: 1 }\n    faults: { delay: 1mo }\n',
    'steps[0] (create).faults.delay must be a duration in ms, s, m, h, d or w (or a number of ms), not "1mo"',
  ],
  [
    'an unknown fault',
    'name: x\nsteps:\n  - create: { as: o, amount: 1 }\n    faults: { reorder: true }\n',
    'steps[0] (create).faults: unknown field "reorder" (known: duplicate, delay, drop, hold)',
  ],
  [
    'a webhook expectation without event',
    'name: x\nsteps:\n  - create: { as: o, amount: 1 }\n    expect: { webhooks: [{ outcome: handled }] }\n',
    'steps[0] (create).expect.webhooks [0] : "event" is required',
  ],
  [
    'two kinds in one step',
    'name: x\nsteps:\n  - create: { as: o, amount: 1 }\n  - { void: { payment: o }, refund: { payment: o } }\n',
    'steps[1] has several step kinds (void, refund): one per step',
  ],
  [
    'a wrong outcome',
    'name: x\nsteps:\n  - create: { as: o, amount: 1, outcome: fraud }\n',
    'steps[0] (create).outcome must be one of success, 3ds, decline, insufficient_funds, not "fraud"',
  ],
];

describe('the scenario format', () => {
  it.each(builtInScenarios().map((s) => [s.name, s] as const))(
    'the built-in %s validates against the JSON Schema',
    (_name, scenario) => {
      expect(validateWithSchema(scenario), JSON.stringify(validateWithSchema.errors)).toBe(true);
    },
  );

  it('has at least the 8 lives of issue 45 built in, each with a description', () => {
    const names = builtInScenarios().map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'three-ds-purchase',
        'decline-then-retry',
        'hosted-checkout-expired',
        'auth-capture-refund',
        'auth-voided',
        'purchase-two-refunds',
        'subscription-three-charges',
        'split-payment',
      ]),
    );
    for (const scenario of builtInScenarios()) expect(scenario.description, scenario.name).toMatch(/\w/);
  });

  it('names the same fields in every place in the JSON Schema, the TypeScript types and the validator', () => {
    expect(sorted(schemaFields())).toEqual(sorted(TYPED_FIELDS));
    expect(sorted(knownFields())).toEqual(sorted(TYPED_FIELDS));
  });

  it('has one schema step per TypeScript step kind, and a typed scenario of every kind passes both checks', () => {
    expect(schema.$defs.step.oneOf.map((step) => step.required[0])).toEqual([...STEP_KINDS]);
    expect(validateWithSchema(EVERY_KIND), JSON.stringify(validateWithSchema.errors)).toBe(true);
    expect(validateScenario(EVERY_KIND)).toBe(EVERY_KIND);
  });

  it.each(INVALID)(
    'refuses %s, naming the step and field; the schema refuses it too',
    (_what, text, message) => {
      expect(validateWithSchema(parse(text))).toBe(false);
      let error: unknown;
      try {
        parseScenario(text, 'bad.yaml');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ScenarioError);
      expect((error as ScenarioError).problems).toContain(message);
      expect((error as ScenarioError).message).toMatch(
        /^\[@payhook\/testing\] bad\.yaml is not a valid scenario:\n {2}/,
      );
    },
  );

  it('refuses a payment used before it was created (the schema cannot say it)', () => {
    expect(() =>
      parseScenario('name: x\nsteps:\n  - create: { as: o, amount: 1 }\n  - refund: { payment: p }\n'),
    ).toThrow('steps[1] (refund): no payment named "p" was created before this step');
  });

  it('refuses a hold no later step releases (the schema cannot say it)', () => {
    expect(() =>
      parseScenario('name: x\nsteps:\n  - create: { as: o, amount: 1 }\n    faults: { hold: true }\n'),
    ).toThrow('steps[0] holds its webhooks but no later step releases them (add { release: {} })');
  });

  it('lists every problem of a file at once, each in its place', () => {
    const problems = (value: unknown) => {
      try {
        validateScenario(value);
      } catch (error) {
        return (error as ScenarioError).problems;
      }
      return [];
    };
    expect(problems([1])).toEqual(['must be an object with "name" and "steps", not [1]']);
    expect(
      problems({
        name: 'no spaces allowed',
        description: 7,
        start: 'tomorrow',
        extra: true,
        steps: [
          'create',
          { create: { as: 'o', amount: 1 }, name: 3, color: 'red' },
          { create: { as: 'o', amount: 2 } },
          { advance: 'soon' },
          { check: '' },
          {
            void: { payment: 'o' },
            faults: 'all',
            expect: { webhooks: [{ event: 'void success', payment: 'p' }] },
          },
        ],
        expect: { ledger: [{ state: 'paid' }] },
      }),
    ).toEqual([
      'unknown top-level field "extra" (known: name, description, start, steps, expect)',
      '"name" must be letters, digits and "-", not "no spaces allowed"',
      '"description" must be a string',
      '"start" must be an ISO date-time such as 2026-01-01T09:00:00Z, not "tomorrow"',
      'steps[0] must be an object with one of create, pay, threeDs, decline, capture, void, refund, advance, chargeOutcomes, reconcile, inject, redeliver, release, check, not "create"',
      'steps[1] (create): unknown field "color"',
      'steps[1] (create).name must be a string',
      'steps[2] (create): a payment named "o" already exists',
      'steps[3] (advance) must be a duration such as 10m, 2h, 1d, 1mo or a number of ms, not "soon"',
      'steps[4] (check) must be a non-empty string, not ""',
      'steps[5] (void).faults must be an object, not "all"',
      'expect.ledger [0] needs "payment", not {"state":"paid"}',
      'steps[5].expect.webhooks[0]: no payment named "p"',
    ]);
  });

  it('says when a file cannot be read', () => {
    expect(() => loadScenario('/')).toThrow('/ is not a valid scenario:\n  cannot be read: EISDIR');
  });

  it('refuses text that is not YAML, naming the line and column', () => {
    expect(() =>
      parseScenario(
        'name: x\nsteps:\n  - create: { as: o, amount: 1\n  - refund: { payment: o }\n',
        'bad.yaml',
      ),
    ).toThrow(
      '[@payhook/testing] bad.yaml is not a valid scenario:\n  is not YAML or JSON: Flow map in block collection must be sufficiently indented and end with a } at line 4, column 3',
    );
  });

  it('prints a scenario as YAML or JSON that loads back the same', () => {
    for (const format of ['yaml', 'json'] as const) {
      expect(parseScenario(serializeScenario(EVERY_KIND, format))).toEqual(EVERY_KIND);
    }
  });

  it('loads a built-in by name and says when a name is neither a built-in nor a file', () => {
    expect(loadScenario('auth-voided').name).toBe('auth-voided');
    expect(() => loadScenario('no-such-life')).toThrow(
      "no-such-life is not a valid scenario:\n  is neither a built-in scenario nor a file ('payhook scenario list' names the built-ins)",
    );
  });
});
