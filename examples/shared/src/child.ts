import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { NotificationLine } from './output.ts';

/** A running example: its address, the notification lines it printed so far, and how to stop it. */
export interface RunningExample {
  readonly url: string;
  readonly lines: NotificationLine[];
  /** Everything it wrote to stderr, for a failure message. */
  readonly stderr: string[];
  /** Resolves once `count` notification lines were printed in all (stdout may trail the HTTP answer). */
  waitForLines(count: number): Promise<NotificationLine[]>;
  /** Sends SIGTERM and resolves with how the process ended, once all it printed was read. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The examples that run as `examples/<name>`. */
export type ExampleName = 'express' | 'fastify' | 'koa' | 'nestjs' | 'queue';

/** Which of an example's programs to start (`npm start`: src/server.ts; `npm run worker`: src/worker.ts) and its extra env. */
export interface ExampleProgram {
  script?: 'src/server.ts' | 'src/worker.ts';
  env?: NodeJS.ProcessEnv;
}

const LISTENING = /^listening on (http:\/\/\S+)$/;
const WORKER_READY = /^worker ready$/;

/**
 * Starts `examples/<name>` as its `npm start` does (tsx over the built packages), on a free port, and resolves
 * once it printed `listening on …` (a worker: `worker ready`, its `url` then empty); rejects if it exits first or is
 * not ready within `timeoutMs`.
 *
 * @example
 * const example = await startExample('express', 'secret');
 * await fetch(`${example.url}/webhooks`, { method: 'POST', … });
 * await example.stop();
 */
export async function startExample(
  name: ExampleName,
  secret: string,
  timeoutMs = 30_000,
  program: ExampleProgram = {},
): Promise<RunningExample> {
  const cwd = fileURLToPath(new URL(`../../${name}/`, import.meta.url));
  const script = program.script ?? 'src/server.ts';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd,
    // Memory store: a REDIS_URL or DATABASE_URL in the caller's environment must not leak into a test.
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      WEBHOOK_SECRET: secret,
      REDIS_URL: '',
      DATABASE_URL: '',
      ...program.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: NotificationLine[] = [];
  const stderr: string[] = [];
  const waiting: { count: number; resolve: (lines: NotificationLine[]) => void }[] = [];
  const settle = () => {
    for (const waiter of waiting.filter((w) => lines.length >= w.count)) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve(lines);
    }
  };
  // 'close' comes after the process exited and its stdout and stderr ended, so every line was read by then.
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  createInterface({ input: child.stderr! }).on('line', (line) => stderr.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `the ${name} example (${script}) was not ready within ${timeoutMs} ms: ${stderr.join('\n')}`,
        ),
      );
    }, timeoutMs);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const listening = LISTENING.exec(line);
      if (listening || WORKER_READY.test(line)) {
        clearTimeout(timer);
        resolve(listening?.[1] ?? '');
      } else if (line.startsWith('{')) {
        lines.push(JSON.parse(line) as NotificationLine);
        settle();
      }
    });
    exited.then(([code]) => {
      clearTimeout(timer);
      const before = script === 'src/server.ts' ? 'listening' : 'ready';
      reject(new Error(`the ${name} example exited with ${code} before ${before}: ${stderr.join('\n')}`));
    });
  });
  return {
    url,
    lines,
    stderr,
    waitForLines(count) {
      return new Promise((resolve) => {
        waiting.push({ count, resolve });
        settle();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const [code, signal] = await exited;
      return { code, signal };
    },
  };
}
