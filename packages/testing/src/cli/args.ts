import { readFile } from 'node:fs/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type CliIO, printable } from './io.js';
import { didYouMean } from './suggest.js';

/** A bad invocation: the command prints the message and its usage hint, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP = { help: { type: 'boolean', short: 'h' } } as const;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; strict: true; allowPositionals: true; options: O & typeof HELP }>
>;

/**
 * Parses a command's arguments strictly (errors become `UsageError`s), with `-h/--help` added. Prints `help`
 * and returns `undefined` when help was asked for.
 */
export function parseCommand<O extends Options>(
  argv: string[],
  options: O,
  io: CliIO,
  help: string,
): Parsed<O> | undefined {
  const all = { ...options, ...HELP };
  let parsed: Parsed<O>;
  try {
    parsed = parseArgs({ args: argv, strict: true, allowPositionals: true, options: all }) as Parsed<O>;
  } catch (error) {
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(error instanceof Error ? error.message : '');
    if (unknown) {
      const names = Object.keys(all).map((name) => `--${name}`);
      throw new UsageError(`unknown option ${unknown[1]}.${didYouMean(unknown[1]!, names)}`);
    }
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if ((parsed.values as { help?: boolean }).help) {
    io.stdout(help);
    return undefined;
  }
  return parsed;
}

/**
 * The secrets: every `--secret`, else `PAYHOOK_SECRET` (safer: argv is visible to other users in `ps`).
 */
export function secretsFrom(values: string[] | undefined, io: CliIO): string[] {
  const secrets = values && values.length > 0 ? values : io.env.PAYHOOK_SECRET ? [io.env.PAYHOOK_SECRET] : [];
  if (secrets.length === 0) throw new UsageError('no secret: pass --secret S or set PAYHOOK_SECRET.');
  if (secrets.some((s) => s === '')) throw new UsageError('a secret is empty.');
  return secrets;
}

export function algorithmFrom(value: string | undefined): 'sha256' | 'sha1' {
  if (value === undefined || value === 'sha256' || value === 'sha1') return value ?? 'sha256';
  throw new UsageError(`--algorithm must be sha256 or sha1, not ${JSON.stringify(value)}.`);
}

/** A required option's value (from `--name` or the environment `variable`); a `UsageError` names both when absent. */
export function requiredOption(name: string, value: string | undefined, variable?: string): string {
  if (value === undefined || value === '') {
    throw new UsageError(`--${name} is required${variable ? ` (or set ${variable})` : ''}.`);
  }
  return value;
}

/** `--api-key` and `--endpoints-key` (or `PAYHOOK_API_KEY`, `PAYHOOK_ENDPOINTS_KEY`): the API's credentials. */
export function apiKeysFrom(
  values: { 'api-key'?: string; 'endpoints-key'?: string },
  io: CliIO,
): { apiKey: string; endpointsKey: string } {
  return {
    apiKey: requiredOption('api-key', values['api-key'] ?? io.env.PAYHOOK_API_KEY, 'PAYHOOK_API_KEY'),
    endpointsKey: requiredOption(
      'endpoints-key',
      values['endpoints-key'] ?? io.env.PAYHOOK_ENDPOINTS_KEY,
      'PAYHOOK_ENDPOINTS_KEY',
    ),
  };
}

/** An http(s) URL given as `flag`; required. */
export function httpUrlFrom(flag: string, value: string | undefined): URL {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} ${JSON.stringify(value)} is not a URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be http or https, not ${url.protocol}.`);
  }
  return url;
}

export function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) {
    throw new UsageError(`${name} must be an integer from 1 to 10000, not ${JSON.stringify(value)}.`);
  }
  return n;
}

/** Reads all of standard input as UTF-8; refuses to wait on a terminal. */
async function readStdin(io: CliIO, what: string): Promise<string> {
  if ((io.stdin as { isTTY?: boolean }).isTTY) {
    throw new UsageError(`standard input is a terminal: pipe ${what} in, or pass --file.`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The text of `--file PATH`, or standard input for `--file -` or no file. */
export async function readInput(file: string | undefined, io: CliIO, what: string): Promise<string> {
  if (file === undefined || file === '-') return readStdin(io, what);
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${file}${code ? ` (${code})` : ''}.`);
  }
}

/** Runs a command body: usage errors print the message and the help hint (or `usage`, given) and exit 2. */
export async function runCommand(
  name: string,
  io: CliIO,
  body: () => Promise<number>,
  usage?: string,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`payhook ${name}: ${printable(error.message)}`);
      io.stderr(usage ?? `Run 'payhook ${name} --help' for usage.`);
      return 2;
    }
    throw error;
  }
}

/** Refuses a positional argument where a command takes none. */
export function noArguments(positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}.`);
}

/** The one positional argument of a command that takes exactly one; `none` or `many` is the usage error. */
export function onePositional(positionals: readonly string[], none: string, many: string): string {
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? none : many);
  return positionals[0]!;
}

/**
 * `--auth-scheme` or `PAYHOOK_AUTH_SCHEME`: the scheme word of `X-API-AUTH: <WORD>-HMAC-SHA256 <key>:<sig>`
 * (letters, digits and `-`; one already ending in `-HMAC-SHA256` is sent as is). Default `SVC`, the spec's
 * stand-in for the service's own word.
 */
export function authSchemeFrom(value: string | undefined, io: CliIO): string {
  const scheme = value ?? (io.env.PAYHOOK_AUTH_SCHEME || undefined) ?? 'SVC';
  if (!/^[a-z0-9-]+$/i.test(scheme)) {
    throw new UsageError(
      `--auth-scheme (or PAYHOOK_AUTH_SCHEME) must be a word of letters, digits and '-', not ${JSON.stringify(scheme)}.`,
    );
  }
  return scheme;
}
