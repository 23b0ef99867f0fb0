import { loadScenario } from '../scenario/load.js';
import type { Scenario } from '../scenario/types.js';
import { ScenarioError } from '../scenario/validate.js';
import { UsageError } from './args.js';
import { type CliIO, printable } from './io.js';

/**
 * The one scenario `payhook scenario run|explore` names (a file or a built-in's name), or 2 once its problems are
 * printed, one line each (a UsageError's message prints as one line).
 */
export function scenarioArgument(positionals: readonly string[], verb: string, io: CliIO): Scenario | 2 {
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'name the scenario: a file or a built-in name.'
        : `${verb} one scenario at a time.`,
    );
  }
  try {
    return loadScenario(positionals[0]!);
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    io.stderr(`payhook scenario: ${printable(positionals[0]!)} is not a valid scenario:`);
    for (const problem of error.problems) io.stderr(`  ${printable(problem)}`);
    return 2;
  }
}

/** `--seed N`: a whole number that fits 32 bits (the fake's id source), 1 without it. */
export function seedFrom(value: string | undefined): number {
  if (value === undefined) return 1;
  const seed = Number(value);
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
    throw new UsageError(`--seed must be a whole number from 0 to 4294967295, not ${JSON.stringify(value)}.`);
  }
  return seed;
}
