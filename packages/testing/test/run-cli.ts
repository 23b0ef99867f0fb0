import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** Fails with the fix when the CLI was not built (child-process tests run the built dist). */
export function assertBuilt(): void {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: run 'npx -y pnpm@10 --filter @payhook/testing run build' first.`);
  }
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a child process, with `input` on stdin; killed after 20 s so a hang fails the test. */
export function runCli(
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return run(process.execPath, [CLI, ...args], options);
}

/** Runs a `sh -c` command line (for real pipes between CLI processes), bounded like `runCli`. */
export function runShell(command: string, env: Record<string, string>): Promise<CliRun> {
  return run('sh', ['-c', command], { env });
}

function run(
  file: string,
  args: string[],
  options: { input?: string; env?: Record<string, string> },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The project credentials `payhook serve` prints. */
export interface ServeCredentials {
  posId: string;
  apiKey: string;
  endpointsKey: string;
}

export interface ServedCli {
  url: string;
  credentials: ServeCredentials;
  /** What it printed up to its `listening on` line. */
  stdout: string;
  /** Sends SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts the built `payhook serve --port 0 …args` as a child process, resolving once it listens; killed after 25 s
 * so a hang fails the test.
 */
export async function serveCli(args: string[], env: Record<string, string>): Promise<ServedCli> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 25_000);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.on('close', () => reject(new Error(`serve exited early: ${stderr}`)));
  });
  const line = (name: string) => new RegExp(`^${name}: (\\S+)$`, 'm').exec(stdout)![1]!;
  const credentials = { posId: line('pos_id'), apiKey: line('api_key'), endpointsKey: line('endpoints_key') };
  const stop = async () => {
    child.kill('SIGTERM');
    const code = await exited;
    clearTimeout(killer);
    return code;
  };
  return { url, credentials, stdout, stop };
}
