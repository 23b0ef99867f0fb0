import { writeFile } from 'node:fs/promises';
import { builtInScenarios } from '../scenario/builtins.js';
import { runScenario } from '../scenario/runner.js';
import { formatTimeline } from '../scenario/timeline.js';
import { httpUrlFrom, secretsFrom, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { type CliIO, jsonText, printable } from './io.js';
import { exploreAction } from './scenario-explore.js';
import { scenarioArgument, seedFrom } from './scenario-file.js';

const SCENARIO_HELP = `Usage: payhook scenario run|explore|list FILE|NAME [--target URL] [--secret S] [--seed N] [--json] [--report FILE] [--runs N] [--faults LIST] [--out FILE]

Whole payment lives, run against your app: a seeded fake payment service on a test clock POSTs each webhook a
scenario's steps cause to --target, with the step's delivery faults, and checks what the app answered.
  run FILE|NAME   run one scenario (a .yaml or .json file, or a built-in's name); prints its timeline, the failures
                  first; exits 1 when an expectation failed
  explore FILE|NAME
                  run it up to --runs times with delivery faults drawn from --seed, stop at the first failing
                  run, shrink its faults to the fewest that still fail and print that failure first as a scenario
                  file, then its timeline; exits 1 on a failure
  list            the built-in scenarios: name and what happens

Options:
  --target URL      the app's webhook URL (http://localhost:3000/webhooks)
  --secret S        the secret the app verifies (or set PAYHOOK_SECRET, which keeps it out of 'ps')
  --seed N          seeds the fake's ids: the same seed gives the same timeline (default 1)
  --json            run: the whole run as JSON; list: one JSON object a line
  --report FILE     run: also write the run as JSON to FILE ('payhook inspect --scenario FILE' shows it);
                    explore: the shrunk failure's run
  --runs N          explore: how many runs to draw (default 100); --seed seeds the draws
  --faults LIST     explore: the faults drawn, of duplicate,delay,drop,hold (default all; hold: reorders)
  --out FILE        explore: also write the shrunk failing scenario to FILE
  -h, --help        this help

Examples:
  payhook scenario list
  PAYHOOK_SECRET=s3cret payhook scenario run three-ds-purchase --target http://localhost:3000/webhooks
  payhook scenario run test/late-refund.yaml --target http://localhost:3000/webhooks --seed 7 --report run.json
  payhook scenario explore purchase-two-refunds --target http://localhost:3000/webhooks --runs 200 --out failure.yaml

The format: docs/scenarios.md; its JSON Schema: @payhook/testing/scenarios/scenario.schema.json.`;

interface ScenarioValues {
  target?: string;
  secret?: string;
  seed?: string;
  report?: string;
  json?: boolean;
  runs?: string;
  faults?: string;
  out?: string;
}

type Action = (positionals: string[], values: ScenarioValues, io: CliIO) => Promise<number>;

const list: Action = async (positionals, values, io) => {
  if (positionals.length > 0)
    throw new UsageError(`list takes no argument, not ${JSON.stringify(positionals[0])}.`);
  for (const scenario of builtInScenarios()) {
    const description = scenario.description ?? '';
    io.stdout(
      values.json
        ? jsonText({ name: scenario.name, description })
        : `${scenario.name.padEnd(28)} ${description}`,
    );
  }
  return 0;
};

const run: Action = async (positionals, values, io) => {
  const scenario = scenarioArgument(positionals, 'run', io);
  if (scenario === 2) return 2;
  const target = httpUrlFrom('--target', values.target).href;
  const [secret] = secretsFrom(values.secret === undefined ? undefined : [values.secret], io);
  const seed = seedFrom(values.seed);
  const result = await runScenario(scenario, { target, secret: secret!, seed });
  if (values.report !== undefined) await writeFile(values.report, `${JSON.stringify(result, null, 2)}\n`);
  if (values.json) io.stdout(jsonText(result, 2));
  else for (const line of formatTimeline(result).split('\n')) io.stdout(printable(line));
  return result.passed ? 0 : 1;
};

/**
 * The actions of `payhook scenario`, by name. `explore` (search for the delivery faults that break an app, shrink a
 * failure) joins them here.
 */
const ACTIONS: Readonly<Record<string, Action>> = { run, explore: exploreAction, list };

export const scenarioCommand = defineCommand({
  help: SCENARIO_HELP,
  options: { text: 'target secret seed report runs faults out', flag: 'json' },
  positionals: true,
  async run({ values, positionals }, io) {
    const [name, ...rest] = positionals;
    const action = name === undefined ? undefined : ACTIONS[name];
    if (!action) {
      throw new UsageError(
        name === undefined
          ? `name an action: ${Object.keys(ACTIONS).join(', ')}.`
          : `unknown action ${JSON.stringify(name)} (${Object.keys(ACTIONS).join(', ')}).`,
      );
    }
    return action(rest, values, io);
  },
});
