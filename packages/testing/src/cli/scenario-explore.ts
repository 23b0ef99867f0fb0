import { writeFile } from 'node:fs/promises';
import { FAULT_KINDS, type FaultKind } from '../scenario/draw.js';
import { exploreScenario } from '../scenario/explore.js';
import { formatTimeline } from '../scenario/timeline.js';
import { httpUrlFrom, positiveInteger, secretsFrom, UsageError } from './args.js';
import { type CliIO, printable } from './io.js';
import { scenarioArgument, seedFrom } from './scenario-file.js';

/** The options `payhook scenario explore` reads. */
export interface ExploreValues {
  target?: string;
  secret?: string;
  seed?: string;
  runs?: string;
  faults?: string;
  out?: string;
  report?: string;
}

function faultsFrom(value: string | undefined): readonly FaultKind[] {
  if (value === undefined) return FAULT_KINDS;
  const kinds = value.split(',').map((kind) => kind.trim());
  const unknown = kinds.find((kind) => !FAULT_KINDS.includes(kind as FaultKind));
  if (unknown !== undefined) {
    throw new UsageError(
      `--faults takes ${FAULT_KINDS.join(', ')} (comma-separated), not ${JSON.stringify(unknown)}.`,
    );
  }
  return kinds as FaultKind[];
}

/**
 * `payhook scenario explore FILE|NAME --target URL [--runs N] [--seed S] [--faults LIST] [--out FILE] [--report RUN]`:
 * the scenario run with drawn faults until a run fails; that failure shrunk and printed first, as a scenario file
 * (its comment lines say how it was found and how to run it again), then its timeline; `--report` writes the shrunk
 * run for `payhook inspect --scenario`. Exit 1 on a failure, 0 when every run
 * passed, 2 for a usage error or a scenario that is not valid.
 */
export async function exploreAction(
  positionals: string[],
  values: ExploreValues,
  io: CliIO,
): Promise<number> {
  const scenario = scenarioArgument(positionals, 'explore', io);
  if (scenario === 2) return 2;
  const target = httpUrlFrom('--target', values.target).href;
  const [secret] = secretsFrom(values.secret === undefined ? undefined : [values.secret], io);
  const runs = positiveInteger('--runs', values.runs, 100);
  const seed = seedFrom(values.seed);
  const faults = faultsFrom(values.faults);
  const result = await exploreScenario(scenario, { target, secret: secret!, runs, seed, faults });
  const { failure } = result;
  if (failure === undefined) {
    io.stdout(`✔ ${result.runs} runs of ${printable(scenario.name)} with seed ${seed}: every run passed.`);
    return 0;
  }
  const shrunk =
    failure.faults.length === 0
      ? `#   it fails without any fault: the app fails the scenario itself ('payhook scenario run' shows how).`
      : `#   shrunk in ${failure.shrinkRuns} runs to ${failure.faults.length}: ${failure.summary}.`;
  const header = [
    `# ✘ ${failure.scenario.name}: run ${failure.found.run} of seed ${seed} failed with ${failure.found.faults.length} fault(s);`,
    shrunk,
    `#   Run it again: payhook scenario run ${values.out ?? 'FILE'} --target ${target}`,
  ];
  for (const line of [
    ...header,
    ...failure.file.trimEnd().split('\n'),
    '',
    ...formatTimeline(failure.run).split('\n'),
  ]) {
    io.stdout(printable(line));
  }
  if (values.out !== undefined) {
    await writeFile(values.out, failure.file);
    io.stderr(`payhook scenario explore: wrote the failing scenario to ${printable(values.out)}`);
  }
  if (values.report !== undefined)
    await writeFile(values.report, `${JSON.stringify(failure.run, null, 2)}\n`);
  return 1;
}
