import { describeFaults, drawFaults, FAULT_KINDS, type FaultKind, type PlacedFault } from './draw.js';
import { loadScenario, serializeScenario } from './load.js';
import { faultSpaceOf, forExploration, withFaults } from './place.js';
import { runScenario } from './runner.js';
import { shrinkFaults } from './shrink.js';
import type { RunScenarioOptions, Scenario, ScenarioFailure, ScenarioRun } from './types.js';

/**
 * How `exploreScenario` searches: the run options of `runScenario`, how many runs, the seed of the draws, and how
 * the app forgets between runs.
 *
 * @example
 * const options: ExploreOptions = { target: app.url, secret, runs: 200, seed: 7, reset: () => app.reset() };
 */
export interface ExploreOptions extends RunScenarioOptions {
  /**
   * How many runs to draw before giving up.
   * @default 100
   */
  runs?: number;
  /**
   * Seeds the fault draws and the runs' own seeds: every scenario run (shrinking's too) gets a seed of its own
   * (from 2^30 up, never one a person types), so its order ids are new to the app and an app that keeps its state
   * and duplicate store between runs needs no reset.
   * @default 1
   */
  seed?: number;
  /**
   * The kinds of fault drawn: `['hold']` explores reorders only.
   * @default ['drop', 'hold', 'duplicate', 'delay']
   */
  faults?: readonly FaultKind[];
  /**
   * Called before every scenario run, for an app whose state is not kept per order (a total, a last event): it
   * must forget what the previous run left.
   * @default none
   */
  reset?: () => void | Promise<void>;
}

/** The seed of the `n`th scenario run of an exploration seeded `seed`: in [2^30, 2^31), distinct for each n. */
function runSeed(seed: number, n: number): number {
  const mixed = Math.imul((seed >>> 0) ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(n + 1, 0x85ebca6b);
  return ((mixed & 0x3fffffff) | 0x40000000) >>> 0;
}

/**
 * What makes two failures the same one across runs: the kind and the message with every value left out (the
 * numbers and quoted strings: what was observed, the order ids' seed, payment ids, webhook numbers), so the same
 * expectation failing is the same failure, whatever it found. Shrinking keeps a smaller fault set only when it fails
 * one of the drawn run's ways, so it cannot slip on the way to another failure (a step that cannot run once its
 * webhook is held).
 */
export function failureKey(failure: ScenarioFailure): string {
  const message = failure.message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '*')
    .replace(/"(?:[^"\\]|\\.)*"/g, '*')
    .replace(/\d+(?:\.\d+)?/g, '*');
  return `${failure.kind}: ${message}`;
}

/**
 * The failure exploration found, shrunk: the fewest faults that still fail, in their simplest form, written into
 * the scenario as a file that fails again under `runScenario` (and `payhook scenario run`).
 *
 * @example
 * if (result.failure) writeFileSync('failure.yaml', result.failure.file);
 */
export interface ExploreFailure {
  /** The shrunk scenario's run: its failures and timeline. */
  readonly run: ScenarioRun;
  /** The shrunk faults, by the index of the original scenario's step. */
  readonly faults: readonly PlacedFault[];
  /** `faults` in one line: `step 2 duplicate ×1, step 1 hold, released reversed after step 2`. */
  readonly summary: string;
  /** The scenario with the shrunk faults in its steps (and a `release` step after a hold). */
  readonly scenario: Scenario;
  /** `scenario` as a YAML file. */
  readonly file: string;
  /** The drawn run that failed first: its number (1-based) and its faults before shrinking. */
  readonly found: { readonly run: number; readonly faults: readonly PlacedFault[] };
  /** Scenario runs spent shrinking. */
  readonly shrinkRuns: number;
}

/**
 * What `exploreScenario` did: how many drawn runs it made (up to and including the failing one), with which seed,
 * and the shrunk failure if one failed.
 *
 * @example
 * expect(result.failure).toBeUndefined();
 */
export interface ExploreResult {
  /** Drawn runs made: up to and including the failing one, else all of them. */
  readonly runs: number;
  /** The seed of the draws. */
  readonly seed: number;
  /** The first failure, shrunk; absent when every run passed. */
  readonly failure?: ExploreFailure;
}

/**
 * Runs `scenario` up to `runs` times, each with delivery faults drawn from `seed` (duplicates, delays, drops the
 * service's retry recovers, a hold released in reverse), stops at the first failing run and shrinks its faults
 * to the fewest that still fail the same way, re-running the scenario. The same seed gives the same runs, the same shrunk file
 * and the same timeline, byte for byte.
 *
 * @example
 * const result = await exploreScenario('three-ds-purchase', { target: app.url, secret, runs: 200, seed: 7, reset });
 * if (result.failure) throw new Error(`${result.failure.file}\n${formatTimeline(result.failure.run)}`);
 */
export async function exploreScenario(
  scenario: Scenario | string,
  options: ExploreOptions,
): Promise<ExploreResult> {
  const base = forExploration(typeof scenario === 'string' ? loadScenario(scenario) : scenario);
  const { runs = 100, seed = 1, reset, faults: kinds = FAULT_KINDS, ...runOptions } = options;
  if (!Number.isSafeInteger(runs) || runs < 1) {
    throw new RangeError(`[@payhook/testing] runs must be a whole number ≥ 1, not ${String(runs)}.`);
  }
  const unknown = kinds.find((kind) => !FAULT_KINDS.includes(kind));
  if (unknown !== undefined) {
    throw new RangeError(
      `[@payhook/testing] faults are ${FAULT_KINDS.join(', ')}, not ${JSON.stringify(unknown)}.`,
    );
  }
  let played = 0;
  const play = async (faults: readonly PlacedFault[]): Promise<ScenarioRun> => {
    await reset?.();
    return runScenario(withFaults(base, faults), { ...runOptions, seed: runSeed(seed, played++) });
  };
  const space = faultSpaceOf(base);
  for (let k = 0; k < runs; k++) {
    const drawn = drawFaults(space, seed, k, kinds);
    const first = await play(drawn);
    if (first.passed) continue;
    const seen = new Set(first.failures.map(failureKey));
    const sameFailure = async (set: readonly PlacedFault[]) =>
      (await play(set)).failures.some((failure) => seen.has(failureKey(failure)));
    const { faults, tries } = await shrinkFaults(drawn, sameFailure);
    const shrunk = withFaults(base, faults);
    const run = await play(faults);
    return {
      runs: k + 1,
      seed,
      failure: {
        run,
        faults,
        summary: describeFaults(faults),
        scenario: shrunk,
        file: serializeScenario(shrunk, 'yaml'),
        found: { run: k + 1, faults: drawn },
        shrinkRuns: tries + 1,
      },
    };
  }
  return { runs, seed };
}
