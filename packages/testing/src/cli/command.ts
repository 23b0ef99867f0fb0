import type { ParseArgsConfig } from 'node:util';
import { noArguments, parseCommand, runCommand } from './args.js';
import type { CliIO } from './io.js';
import { untilSignal } from './until-signal.js';

/**
 * A command's options by kind, each a list of long names separated by spaces (its help says what each does):
 * `text` takes a value (`--url URL`), `list` takes one and may repeat (`--secret S --secret T`), `flag` none
 * (`--json`).
 */
export interface OptionNames {
  readonly text?: string;
  readonly list?: string;
  readonly flag?: string;
}

/** The names of a list separated by spaces, as a union. */
type Names<L> = L extends `${infer Name} ${infer Rest}`
  ? Name | Names<Rest>
  : L extends ''
    ? never
    : L & string;

/** The option values `run` gets for the options `N`: a value as given, or absent. */
export type OptionValues<N extends OptionNames> = { [K in Names<N['text']>]?: string } & {
  [K in Names<N['list']>]?: string[];
} & { [K in Names<N['flag']>]?: boolean };

/** What a command's `run` gets: its option values and positional arguments, parsed strictly. */
interface CommandArgs<N extends OptionNames> {
  readonly values: OptionValues<N>;
  readonly positionals: string[];
}

const namesOf = (list = '') => list.split(' ').filter((name) => name !== '');

/** The options as node:util's `parseArgs` takes them. */
function parseArgsOptions(names: OptionNames): NonNullable<ParseArgsConfig['options']> {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const name of namesOf(names.text)) options[name] = { type: 'string' };
  for (const name of namesOf(names.list)) options[name] = { type: 'string', multiple: true };
  for (const name of namesOf(names.flag)) options[name] = { type: 'boolean' };
  return options;
}

/** One `payhook` command: only what is its own. `defineCommand` adds the rest. */
export interface CommandDefinition<N extends OptionNames> {
  /**
   * What `-h` or `--help` prints, to standard output (exit 0). Its first line, `Usage: payhook <name> …`, names the
   * command: the name its error lines start with (`payhook <name>: …`), so the two cannot differ.
   */
  readonly help: string;
  /** Its options by kind; `-h`/`--help` is added. */
  readonly options: N;
  /**
   * Whether it takes positional arguments (`run` checks them); when not, any is a usage error.
   * @default false
   */
  readonly positionals?: boolean;
  /**
   * What a usage error prints after its message: the hint `Run 'payhook <name> --help' for usage.`, or with `true`
   * the whole help (`serve`, whose required options are what a first run gets wrong).
   * @default false
   */
  readonly helpOnUsageError?: boolean;
  /**
   * Whether it runs until stopped (`serve`, `inspect`): its `signal` aborts on SIGINT or SIGTERM, unless the caller
   * passes its own.
   * @default false
   */
  readonly longLived?: boolean;
  /**
   * The work; resolves the exit code. A `UsageError` it throws prints its message and the help hint (exit 2); any
   * other error is `runCli`'s (printed, exit 1).
   */
  run(args: CommandArgs<N>, io: CliIO, signal: AbortSignal): Promise<number>;
}

/** A command as `runCli` calls it: the arguments after its name, and the exit code. */
export type Command = (argv: string[], io: CliIO, signal?: AbortSignal) => Promise<number>;

/** The signal of a command that is not long-lived: never aborted. */
const RUNNING = new AbortController().signal;

/** The command's name, from the first line of its help. */
function nameIn(help: string): string {
  const name = /^Usage: payhook ([a-z][a-z-]*)/.exec(help)?.[1];
  if (name === undefined) throw new TypeError("a command's help starts with 'Usage: payhook <name>'.");
  return name;
}

/**
 * A `payhook` command from its definition, with what every command shares: strict parsing of its options (an
 * unknown one named with a suggestion), `-h`/`--help`, positional arguments refused unless it takes them, and the
 * exit codes (0 for help, 2 for a usage error with the hint `Run 'payhook <name> --help' for usage.`).
 *
 * @example
 * export const driftCommand = defineCommand({
 *   help: 'Usage: payhook drift [--json]',
 *   options: { flag: 'json' },
 *   run: async ({ values }, io) => { io.stdout(values.json ? '{}' : 'nothing drifted'); return 0; },
 * });
 */
export function defineCommand<const N extends OptionNames>(definition: CommandDefinition<N>): Command {
  const { help, positionals, helpOnUsageError, longLived, run } = definition;
  const name = nameIn(help);
  const options = parseArgsOptions(definition.options);
  const once = (argv: string[], io: CliIO, signal: AbortSignal) =>
    runCommand(
      name,
      io,
      async () => {
        const parsed = parseCommand(argv, options, io, help);
        if (parsed === undefined) return 0;
        if (!positionals) noArguments(parsed.positionals);
        return run({ values: parsed.values as OptionValues<N>, positionals: parsed.positionals }, io, signal);
      },
      helpOnUsageError ? help : undefined,
    );
  return (argv, io, signal) => {
    if (signal !== undefined || longLived !== true) return once(argv, io, signal ?? RUNNING);
    return untilSignal((stop) => once(argv, io, stop));
  };
}
