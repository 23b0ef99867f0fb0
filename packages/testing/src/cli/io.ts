import { Readable } from 'node:stream';
/**
 * What a `payhook` command reads from and writes to. The real CLI passes the process streams; a test may pass
 * in-memory ones and run a command in-process.
 *
 * @example
 * const lines: string[] = [];
 * const io: CliIO = { stdout: (l) => lines.push(l), stderr: (l) => lines.push(l), stdin: process.stdin, env: {} };
 * const code = await serveCommand(['--port', '0'], io);
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
  /**
   * Writes text to standard output as it is, without a newline: `payhook sign --format body` into a file or a
   * pipe, so what curl sends is what was signed. Without it, `stdout` is used.
   */
  write?: (text: string) => void;
  /** Whether standard output is a terminal (then a body ends with a newline, for the prompt). */
  stdoutIsTerminal?: boolean;
}

/**
 * A {@link CliIO} bound to the current process.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIO());
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
    write: (text) => {
      process.stdout.write(text);
    },
    stdoutIsTerminal: process.stdout.isTTY === true,
  };
}

/**
 * An in-memory IO: what a command printed, line by line, and a fixed standard input and environment.
 *
 * @example
 * const { io, out } = memoryIO('', { PAYHOOK_SECRET: 's3cret' });
 * await runCli(['send', 'purchase', '--url', url], io);
 */
export function memoryIO(
  input = '',
  env: Readonly<Record<string, string>> = {},
): { io: CliIO; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = {
    stdout: (line) => void out.push(line),
    stderr: (line) => void err.push(line),
    stdin: Readable.from(input === '' ? [] : [input]),
    env,
  };
  return { io, out, err };
}
