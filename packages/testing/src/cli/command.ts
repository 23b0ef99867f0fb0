import type { ParseArgsConfig } from 'node:util';
import { type CommandValues, noArguments, parseCommand, runCommand } from './args.js';
import type { CliIO } from './io.js';
import { untilSignal } from './until-signal.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What a command's `run` gets: its option values and positional arguments, parsed strictly. */
interface CommandArgs<O extends Options> {
  readonly values: CommandValues<O>;
  readonly positionals: string[];
}

/** One `payhook` command: only what is its own. `defineCommand` adds the rest. */
export interface CommandDefinition<O extends Options> {
  /** The word after `payhook`; it starts the command's error lines (`payhook <name>: …`). */
  readonly name: string;
  /** What `-h` or `--help` prints, to standard output (exit 0). */
  readonly help: string;
  /** Its options, as node:util's `parseArgs` takes them; `-h`/`--help` is added. */
  readonly options: O;
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
  run(args: CommandArgs<O>, io: CliIO, signal: AbortSignal): Promise<number>;
}

/** A command as `runCli` calls it: the arguments after its name, and the exit code. */
export type Command = (argv: string[], io: CliIO, signal?: AbortSignal) => Promise<number>;

/** The signal of a command that is not long-lived: never aborted. */
const RUNNING = new AbortController().signal;

/**
 * A `payhook` command from its definition, with what every command shares: strict parsing of its options (an
 * unknown one named with a suggestion), `-h`/`--help`, positional arguments refused unless it takes them, and the
 * exit codes (0 for help, 2 for a usage error with the hint `Run 'payhook <name> --help' for usage.`).
 *
 * @example
 * export const driftCommand = defineCommand({
 *   name: 'drift',
 *   help: DRIFT_HELP,
 *   options: { json: { type: 'boolean' } },
 *   run: async ({ values }, io) => { io.stdout(values.json ? '{}' : 'nothing drifted'); return 0; },
 * });
 */
export function defineCommand<const O extends Options>(definition: CommandDefinition<O>): Command {
  const { name, help, options, positionals, helpOnUsageError, longLived, run } = definition;
  const once = (argv: string[], io: CliIO, signal: AbortSignal) =>
    runCommand(
      name,
      io,
      async () => {
        const parsed = parseCommand(argv, options, io, help);
        if (parsed === undefined) return 0;
        if (!positionals) noArguments(parsed.positionals);
        return run(parsed, io, signal);
      },
      helpOnUsageError ? help : undefined,
    );
  return (argv, io, signal) => {
    if (signal !== undefined || longLived !== true) return once(argv, io, signal ?? RUNNING);
    return untilSignal((stop) => once(argv, io, stop));
  };
}
