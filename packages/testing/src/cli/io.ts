/**
 * What a `payhook` command reads from and writes to. The real CLI passes the process streams; tests pass
 * in-memory ones, so every command runs in-process or as a child process alike.
 *
 * @example
 * ```ts
 * import { processIO } from '@payhook/testing/cli-io';
 * const code = await signCommand(['--secret', 's3cret', '--file', 'n.json'], processIO());
 * ```
 */
export interface CliIO {
  /** Writes one line (a newline is appended) to standard output. */
  stdout: (line: string) => void;
  /** Writes one line (a newline is appended) to standard error. */
  stderr: (line: string) => void;
  /** Standard input, read by commands that take `-` or a piped body. */
  stdin: NodeJS.ReadableStream;
  /** Environment variables, e.g. `PAYHOOK_SECRET`. */
  env: Readonly<Record<string, string | undefined>>;
}

/** A command's exit code: 0 success, 1 a failed check or request, 2 a usage error. */
export type ExitCode = 0 | 1 | 2 | (number & {});

/**
 * The signature every `payhook` subcommand shares.
 *
 * @example
 * ```ts
 * const serve: CliCommand = async (argv, io) => { io.stdout('listening'); return 0; };
 * ```
 */
export type CliCommand = (argv: string[], io: CliIO) => Promise<number>;

/**
 * A {@link CliIO} bound to the current process.
 *
 * @example
 * ```ts
 * process.exitCode = await verifyCommand(process.argv.slice(3), processIO());
 * ```
 */
export function processIO(): CliIO {
  return {
    stdout: (line) => {
      process.stdout.write(`${line}\n`);
    },
    stderr: (line) => {
      process.stderr.write(`${line}\n`);
    },
    stdin: process.stdin,
    env: process.env,
  };
}
