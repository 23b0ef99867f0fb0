import type { Scenario } from './types.js';
import { validateScenario } from './validate.js';

/**
 * A scenario written in TypeScript: typed as the file format is, and checked as a file is (a `ScenarioError` names
 * the step and field of each problem).
 *
 * @example
 * const refund = defineScenario({
 *   name: 'late-refund',
 *   steps: [
 *     { create: { as: 'order', amount: 100 } },
 *     { refund: { payment: 'order', amount: 40 }, expect: { webhooks: [{ event: 'refund success', outcome: 'handled' }] } },
 *   ],
 * });
 */
export function defineScenario<const S extends Scenario>(scenario: S): S {
  validateScenario(scenario, `scenario ${JSON.stringify(scenario.name)}`);
  return scenario;
}
