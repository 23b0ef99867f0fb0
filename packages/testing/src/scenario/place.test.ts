import { describe, expect, it } from 'vitest';
import { faultSpaceOf, forExploration, withFaults } from './place.js';
import type { Scenario } from './types.js';

const LIFE: Scenario = {
  name: 'life',
  steps: [
    {
      create: { as: 'order', amount: 100, card: 'threeDs' },
      expect: {
        webhooks: [
          { event: 'purchase pending', payment: 'order', outcome: 'handled', status: 200, count: 1 },
        ],
        ledger: [{ payment: 'order', state: 'pending' }],
      },
    },
    {
      threeDs: { payment: 'order' },
      expect: {
        ledger: [{ payment: 'order', state: 'paid' }],
        http: [{ get: '/orders/{order}', json: 'status', equals: 'paid' }],
      },
    },
    { create: { as: 'hosted', amount: 5, mode: 'hosted' } },
    { chargeOutcomes: { payment: 'order', outcomes: ['decline'] } },
    { refund: { payment: 'order', amount: 40 }, faults: { delay: '5m' } },
    { check: 'the end' },
  ],
};

describe('faultSpaceOf', () => {
  it('lists the steps that send webhooks: not a hosted create, charge outcomes or a check', () => {
    expect(faultSpaceOf(LIFE)).toEqual({ steps: [0, 1, 4], length: 6 });
  });
});

describe('withFaults', () => {
  it('writes each fault into its step, over the faults the step had', () => {
    const faulty = withFaults(LIFE, [
      { step: 0, kind: 'duplicate', copies: 2 },
      { step: 0, kind: 'delay', ms: 3_600_000 },
      { step: 1, kind: 'drop' },
      { step: 4, kind: 'duplicate', copies: 1 },
      { step: 4, kind: 'delay', ms: 1_000 },
    ]);
    expect(faulty.steps.map((step) => step.faults)).toEqual([
      { duplicate: 2, delay: '1h' },
      { drop: true },
      undefined,
      undefined,
      { duplicate: 1, delay: '1s' },
      undefined,
    ]);
    expect(LIFE.steps[4]!.faults).toEqual({ delay: '5m' });
  });

  it('holds a step and releases it in reverse right after the step it is released after', () => {
    const faulty = withFaults(LIFE, [{ step: 0, kind: 'hold', releaseAfter: 1 }]);
    expect(faulty.steps.map((step) => Object.keys(step).filter((key) => key !== 'expect'))).toEqual([
      ['create', 'faults'],
      ['threeDs'],
      ['release'],
      ['create'],
      ['chargeOutcomes'],
      ['refund', 'faults'],
      ['check'],
    ]);
    expect(faulty.steps[0]!.faults).toEqual({ hold: true });
    expect(faulty.steps[2]).toEqual({ release: { reverse: true } });
  });

  it('writes a delay that is no whole second in ms', () => {
    expect(withFaults(LIFE, [{ step: 1, kind: 'delay', ms: 1_500 }]).steps[1]!.faults).toEqual({
      delay: 1_500,
    });
  });
});

describe('forExploration', () => {
  it('moves step expectations to the end: webhooks delivered (not counted per step), the last ledger and HTTP state', () => {
    const explored = forExploration(LIFE);
    expect(explored.steps.every((step) => step.expect === undefined)).toBe(true);
    expect(explored.expect).toEqual({
      webhooks: [{ event: 'purchase pending', payment: 'order' }],
      ledger: [{ payment: 'order', state: 'paid' }],
      http: [{ get: '/orders/{order}', json: 'status', equals: 'paid' }],
    });
  });

  it("keeps the scenario's own final expectations as they are, over a step's", () => {
    const explored = forExploration({
      ...LIFE,
      expect: {
        webhooks: [{ event: 'refund success', outcome: 'handled' }],
        ledger: [{ payment: 'order', state: 'partially_refunded' }],
      },
    });
    expect(explored.expect).toEqual({
      webhooks: [
        { event: 'purchase pending', payment: 'order' },
        { event: 'refund success', outcome: 'handled' },
      ],
      ledger: [{ payment: 'order', state: 'partially_refunded' }],
      http: [{ get: '/orders/{order}', json: 'status', equals: 'paid' }],
    });
  });

  it('leaves a scenario without expectations without any', () => {
    expect(forExploration({ name: 'bare', steps: [{ advance: '1d' }] })).toEqual({
      name: 'bare',
      steps: [{ advance: '1d' }],
    });
  });
});
