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
      process.stdout.write(`${terminalSafe(line)}\n`);
    },
    stderr: (line) => {
      process.stderr.write(`${terminalSafe(line)}\n`);
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
    stdout: (line) => void out.push(terminalSafe(line)),
    stderr: (line) => void err.push(terminalSafe(line)),
    stdin: Readable.from(input === '' ? [] : [input]),
    env,
  };
  return { io, out, err };
}

/** C0 and C1 controls, DEL, the bidi controls (U+202E turns a line around), and UTF-16 surrogates without their pair. */
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  return (
    NAMED[char] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`)
  );
}

/**
 * Text from outside (a key, a capture, an error message, a server's reply) as a human-readable command prints it:
 * every control character (C0, DEL, C1) and lone surrogate shown as an escape (`\n`, `\x1b`, `\u{d800}`), so it
 * can neither split a line nor reach the terminal as a command.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escaped);
}

/** What the IO writes: `printable`, but the line breaks and tabs of a command's own layout kept. */
function terminalSafe(line: string): string {
  return line.replace(UNPRINTABLE, (char) => (char === '\n' || char === '\t' ? char : escaped(char)));
}

/** JSON text with DEL, C1 and bidi controls, which `JSON.stringify` leaves raw, escaped as `\uXXXX`: still JSON. */
export function jsonText(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
