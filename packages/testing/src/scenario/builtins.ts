import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Scenario } from './types.js';
import { validateScenario } from './validate.js';

/** The package's `scenarios/` folder: beside `dist/` once built, two levels up from this file in the sources. */
function scenariosDir(): string {
  for (const relative of ['../scenarios/', '../../scenarios/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}scenario.schema.json`)) return dir;
  }
  throw new Error('[@payhook/testing] the built-in scenarios folder is missing from the package.');
}

let cache: readonly Scenario[] | undefined;

/**
 * Every built-in scenario (the `.yaml` files of the package's `scenarios/` folder), by name.
 *
 * @example
 * for (const scenario of builtInScenarios()) expect((await runScenario(scenario, { target, secret })).passed).toBe(true);
 */
export function builtInScenarios(): Scenario[] {
  if (cache === undefined) {
    const dir = scenariosDir();
    cache = readdirSync(dir)
      .filter((file) => file.endsWith('.yaml'))
      .sort()
      .map((file) => validateScenario(parse(readFileSync(`${dir}${file}`, 'utf8')), `scenarios/${file}`));
  }
  return cache.map((scenario) => structuredClone(scenario));
}

/** The built-in scenario named `name`, or `undefined`. */
export function builtInScenario(name: string): Scenario | undefined {
  return builtInScenarios().find((scenario) => scenario.name === name);
}
