import { afterEach, describe, expect, it } from 'vitest';
import { builtInScenarios } from './builtins.js';
import { defineScenario } from './define.js';
import { runScenario } from './runner.js';
import { startTestApp, type TestApp } from './test-app.js';
import { formatTimeline } from './timeline.js';
import type { Scenario } from './types.js';

const SECRET = 'scenario-runner-secret';
const apps: TestApp[] = [];

async function app(): Promise<TestApp> {
  const started = await startTestApp(SECRET);
  apps.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

describe('runScenario', () => {
  it.each(builtInScenarios().map((s) => [s.name, s] as const))(
    'passes the built-in %s against an app with a ledger and its own state route',
    async (_name, scenario) => {
      const merchant = await app();
      const run = await runScenario(scenario, {
        target: merchant.target,
        secret: SECRET,
        ledger: merchant.ledger,
      });
      expect(run.failures, formatTimeline(run)).toEqual([]);
      expect(run.passed).toBe(true);
    },
  );

  it('gives the same timeline byte for byte for the same seed, and other ids for another seed', async () => {
    const timelines: string[] = [];
    for (const seed of [7, 7]) {
      const merchant = await app();
      const run = await runScenario('delivery-faults', { target: merchant.target, secret: SECRET, seed });
      timelines.push(JSON.stringify(run.timeline));
    }
    expect(timelines[1]).toBe(timelines[0]);
    const other = await runScenario('delivery-faults', {
      target: (await app()).target,
      secret: SECRET,
      seed: 8,
    });
    expect(JSON.stringify(other.timeline)).not.toBe(timelines[0]);
  });

  it('names the step, the webhook and the answer when the app answers otherwise than expected', async () => {
    const merchant = await app();
    const scenario = defineScenario({
      name: 'wrong-expectation',
      steps: [
        { create: { as: 'order', amount: 10 } },
        {
          redeliver: { payment: 'order' },
          expect: { webhooks: [{ event: 'purchase success', payment: 'order', outcome: 'handled' }] },
        },
      ],
    });
    const run = await runScenario(scenario, { target: merchant.target, secret: SECRET });
    expect(run.passed).toBe(false);
    expect(run.failures).toEqual([
      {
        step: 1,
        kind: 'webhook',
        message: 'purchase success of order (webhook #2) answered duplicate, expected handled',
      },
    ]);
    expect(formatTimeline(run).split('\n').slice(0, 2)).toEqual([
      '✘ failed (1)  scenario wrong-expectation, seed 1',
      '  ✘ step 2 (webhook): purchase success of order (webhook #2) answered duplicate, expected handled',
    ]);
  });

  it('reads the app state over HTTP and the ledger, and reports each mismatch', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'state-checks',
        steps: [
          {
            create: { as: 'order', method: 'auth', amount: 10 },
            expect: {
              http: [{ get: '/orders/{order}', json: '$.status', equals: 'paid' }],
              ledger: [{ payment: 'order', state: 'paid' }],
            },
          },
        ],
      },
      { target: merchant.target, secret: SECRET, ledger: merchant.ledger },
    );
    expect(run.failures.map((f) => [f.kind, f.message])).toEqual([
      ['ledger', 'the ledger\'s state of order is "authorized", expected "paid"'],
      ['http', 'GET /orders/{order}: $.status is "success", expected "paid"'],
    ]);
  });

  it('stops at a step the fake refuses, and says why', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'void-a-refunded',
        steps: [
          { create: { as: 'order', amount: 10 } },
          { refund: { payment: 'order' } },
          { capture: { payment: 'order' } },
        ],
      },
      { target: merchant.target, secret: SECRET },
    );
    expect(run.failures).toHaveLength(1);
    expect(run.failures[0]).toMatchObject({ step: 2, kind: 'step' });
    expect(run.failures[0]!.message).toMatch(/^capture could not run: O-409 /);
  });

  it('fails a run whose webhook the app never acknowledged, after the retry schedule on the fake clock', async () => {
    // No expectation of its own: the run's check at the end names the webhook.
    const run = await runScenario(
      { name: 'unexpecting', steps: [{ create: { as: 'order', amount: 10 } }] },
      { target: 'http://127.0.0.1:9/webhooks', secret: SECRET },
    );
    expect(run.passed).toBe(false);
    const attempts = run.timeline.filter((entry) => entry.type === 'delivery');
    expect(attempts.map((a) => [a.attempt, a.at])).toEqual([
      [1, '2026-01-01T09:00:00.000Z'],
      [2, '2026-01-01T09:01:00.000Z'],
      [3, '2026-01-01T09:06:00.000Z'],
      [4, '2026-01-01T09:36:00.000Z'],
      [5, '2026-01-01T11:36:00.000Z'],
    ]);
    expect(run.failures).toHaveLength(1);
    expect(run.failures[0]!.message).toMatch(
      /^webhook #1 \(purchase success, order unexpecting-order-s1\) was not delivered after 5 attempt\(s\): fetch failed/,
    );
  });

  it('signs an injected notification the spec does not show, and lets the app refuse it', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'injected',
        steps: [
          { create: { as: 'order', amount: 10 } },
          {
            inject: {
              payment: 'order',
              fields: { method: 'chargeback', status: 'success', dispute_id: 'd-1' },
            },
            expect: {
              webhooks: [{ event: 'chargeback success', payment: 'order', status: 200, outcome: 'handled' }],
            },
          },
        ],
      },
      { target: merchant.target, secret: SECRET },
    );
    expect(run.failures, formatTimeline(run)).toEqual([]);
    expect(merchant.handled.at(-1)).toBe('chargeback success injected-order-s1');
  });

  it('writes outOfOrder as hold and release in reverse: success first, the late pending answered stale', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'three-ds-reordered',
        steps: [
          { create: { as: 'order', amount: 10, card: 'threeDs' }, faults: { hold: true } },
          { threeDs: { payment: 'order' }, faults: { hold: true } },
          {
            release: { reverse: true },
            expect: {
              webhooks: [
                { event: 'purchase success', outcome: 'handled' },
                { event: 'purchase pending', outcome: 'stale' },
              ],
              ledger: [{ payment: 'order', state: 'paid' }],
            },
          },
        ],
      },
      { target: merchant.target, secret: SECRET, ledger: merchant.ledger },
    );
    expect(run.failures, formatTimeline(run)).toEqual([]);
    expect(merchant.handled).toEqual(['purchase success three-ds-reordered-order-s1']);
  });

  it('sends burst copies of a webhook with redeliver, exactly one handled in all', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'burst',
        steps: [
          { create: { as: 'order', amount: 10 } },
          {
            redeliver: { payment: 'order', count: 5 },
            expect: { webhooks: [{ event: 'purchase success', count: 5, outcome: 'duplicate' }] },
          },
        ],
      },
      { target: merchant.target, secret: SECRET },
    );
    expect(run.failures, formatTimeline(run)).toEqual([]);
    expect(merchant.handled).toEqual(['purchase success burst-order-s1']);
  });

  it('pays hosted checkouts by card with a wrong 3-D Secure code, by wallet, and declines one', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'hosted',
        steps: [
          { create: { as: 'card', mode: 'hosted', amount: 10 } },
          { create: { as: 'wallet', mode: 'hosted', amount: 11 } },
          { create: { as: 'declined', mode: 'hosted', amount: 12 } },
          {
            pay: { payment: 'card', card: 'threeDs' },
            expect: { webhooks: [{ event: 'purchase pending', payment: 'card', outcome: 'handled' }] },
          },
          {
            threeDs: { payment: 'card', code: '000000' },
            expect: { webhooks: [{ event: 'purchase failure', payment: 'card', outcome: 'handled' }] },
          },
          {
            pay: { payment: 'wallet', wallet: 'google_pay' },
            expect: { webhooks: [{ event: 'purchase success', payment: 'wallet', outcome: 'handled' }] },
          },
          {
            decline: { payment: 'declined' },
            expect: {
              webhooks: [{ event: 'purchase failure', payment: 'declined', outcome: 'handled' }],
              ledger: [{ payment: 'declined', state: 'failed' }],
            },
          },
        ],
      },
      { target: merchant.target, secret: SECRET, ledger: merchant.ledger },
    );
    expect(run.failures, formatTimeline(run)).toEqual([]);
  });

  it('runs a subscription charge declined then retried, each charge its own webhook', async () => {
    const merchant = await app();
    const run = await runScenario(
      {
        name: 'retried-charge',
        steps: [
          {
            create: {
              as: 'plan',
              amount: 5,
              subscription: { every: 'day', retryAttempts: 1, retryIntervalHours: 2 },
            },
          },
          { chargeOutcomes: { payment: 'plan', outcomes: ['insufficient_funds'] } },
          {
            advance: '1d',
            expect: {
              webhooks: [{ event: 'purchase failure', payment: 'plan', count: 1, outcome: 'handled' }],
            },
          },
          {
            advance: '3h',
            expect: {
              webhooks: [{ event: 'purchase success', payment: 'plan', count: 1, outcome: 'handled' }],
            },
          },
        ],
      },
      { target: merchant.target, secret: SECRET },
    );
    expect(run.failures, formatTimeline(run)).toEqual([]);
    const times = run.timeline.flatMap((e) => (e.type === 'delivery' ? [e.at] : []));
    expect(times).toEqual([
      '2026-01-01T09:00:00.000Z',
      '2026-01-02T09:00:00.000Z',
      '2026-01-02T11:00:00.000Z',
    ]);
  });

  it('refuses a scenario object that is not valid before running anything, naming the step', async () => {
    const scenario = { name: 'bad', steps: [{ refund: { payment: 'nothing' } }] } as unknown as Scenario;
    await expect(runScenario(scenario, { target: 'http://127.0.0.1:9/webhooks' })).rejects.toThrow(
      'steps[0] (refund): no payment named "nothing" was created before this step',
    );
  });

  it('names each unacknowledged webhook once, and hints at the secret when the app refused the signature', async () => {
    const merchant = await app();
    const run = await runScenario('auth-voided', { target: merchant.target, secret: 'not the app secret' });
    expect(run.failures.map((f) => [f.step, f.message])).toEqual([
      [
        0,
        'auth success of order (webhook #1) was never acknowledged: its last attempt got 401 signature.invalid',
      ],
      [
        2,
        'void success of order (webhook #2) was never acknowledged: its last attempt got 401 signature.invalid',
      ],
    ]);
    expect(formatTimeline(run).split('\n')[3]).toBe(
      '  hint: the app refused the signature: sign with the secret it verifies (--secret, PAYHOOK_SECRET)',
    );
  });
});
