import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { builtInScenario } from './builtins.js';
import type { Scenario } from './types.js';
import { ScenarioError, validateScenario } from './validate.js';

/**
 * A scenario from its text, YAML or JSON (JSON is YAML), checked: a `ScenarioError` names each problem's step and
 * field.
 *
 * @example
 * const scenario = parseScenario('name: refund\nsteps:\n  - create: { as: order, amount: 100 }\n');
 */
export function parseScenario(text: string, source = 'the scenario'): Scenario {
  let value: unknown;
  try {
    value = parse(text, { prettyErrors: true });
  } catch (error) {
    throw new ScenarioError(source, [
      `is not YAML or JSON: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  return validateScenario(value, source);
}

/**
 * A scenario by built-in name (`payhook scenario list`) or file path (`.yaml`, `.yml`, `.json`), checked.
 *
 * @example
 * const scenario = loadScenario('three-ds-purchase');
 * const mine = loadScenario('test/scenarios/late-refund.yaml');
 */
export function loadScenario(fileOrName: string): Scenario {
  const builtIn = /^[a-z0-9-]+$/i.test(fileOrName) ? builtInScenario(fileOrName) : undefined;
  if (builtIn) return builtIn;
  let text: string;
  try {
    text = readFileSync(fileOrName, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScenarioError(fileOrName, [
      code === 'ENOENT'
        ? `is neither a built-in scenario nor a file ('payhook scenario list' names the built-ins)`
        : `cannot be read: ${code ?? String(error)}`,
    ]);
  }
  return parseScenario(text, fileOrName);
}

/**
 * A scenario as a file that reproduces it: YAML (the default) or JSON, loadable by `loadScenario`.
 *
 * @example
 * writeFileSync('failing.yaml', serializeScenario(shrunk, 'yaml'));
 */
export function serializeScenario(scenario: Scenario, format: 'yaml' | 'json' = 'yaml'): string {
  const plain = JSON.parse(JSON.stringify(scenario)) as Scenario;
  if (format === 'json') return `${JSON.stringify(plain, null, 2)}\n`;
  return stringify(plain, { lineWidth: 0 });
}
