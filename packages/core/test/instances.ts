import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { STORE_SECRET } from './bodies.js';

const SERVER = fileURLToPath(new URL('./store-server.mjs', import.meta.url));
const EXPRESS_EXAMPLE = fileURLToPath(new URL('../../../examples/express/', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/stores/postgres.js', import.meta.url));

export interface InstanceEvent {
  event: 'listening' | 'hanging' | 'handled';
  payment_id?: string;
  port?: number;
  pid: number;
}

/**
 * One webhook server process and the events it printed: `store-server.mjs` on the built package (JSON events),
 * or the Express example (`listening on URL`, then one JSON line per handled notification).
 */
export class Instance {
  readonly events: InstanceEvent[] = [];
  readonly child: ChildProcess;
  url = '';
  #waiters: Array<{ match: (e: InstanceEvent) => boolean; resolve: (e: InstanceEvent) => void }> = [];
  #stderr = '';

  constructor(env: Record<string, string>, example = false) {
    this.child = spawn(process.execPath, example ? ['--import', 'tsx', 'src/server.ts'] : [SERVER], {
      cwd: example ? EXPRESS_EXAMPLE : undefined,
      env: { ...process.env, SECRET: STORE_SECRET, WEBHOOK_SECRET: STORE_SECRET, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (chunk) => {
      this.#stderr += chunk;
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const listening = /^listening on http:\/\/[^:]+:(\d+)/.exec(line);
      const parsed = listening
        ? { event: 'listening', port: Number(listening[1]) }
        : (JSON.parse(line) as Partial<InstanceEvent>);
      // The example prints a notification line without an event name: it is a handled one.
      const event = { event: 'handled', pid: this.child.pid!, ...parsed } as InstanceEvent;
      this.events.push(event);
      const waiting = this.#waiters;
      this.#waiters = [];
      for (const waiter of waiting) {
        if (waiter.match(event)) waiter.resolve(event);
        else this.#waiters.push(waiter);
      }
    });
  }

  /** Resolves the first event (already printed or to come) that matches; fails after `timeoutMs`. */
  waitFor(match: (e: InstanceEvent) => boolean, timeoutMs = 15_000): Promise<InstanceEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`instance ${this.child.pid} printed no such event; stderr: ${this.#stderr}`)),
        timeoutMs,
      );
      const onExit = () =>
        reject(new Error(`instance exited (${this.child.exitCode}); stderr: ${this.#stderr}`));
      this.child.once('exit', onExit);
      this.#waiters.push({
        match,
        resolve: (event) => {
          clearTimeout(timer);
          this.child.off('exit', onExit);
          resolve(event);
        },
      });
    });
  }

  handled(): string[] {
    return this.events.filter((e) => e.event === 'handled').map((e) => e.payment_id!);
  }

  /** Stops the process with `signal` and waits for it to exit. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill(signal);
    });
  }
}

/** Starts `count` instances with `env` (plus per-instance env from `each`); resolves once all listen. */
export async function startInstances(
  count: number,
  env: Record<string, string>,
  each: (index: number) => Record<string, string> = () => ({}),
  example = false,
): Promise<Instance[]> {
  if (!existsSync(DIST)) {
    throw new Error('the multi-process store tests run the built package: run the core build first.');
  }
  const instances = Array.from({ length: count }, (_, i) => new Instance({ ...env, ...each(i) }, example));
  await Promise.all(
    instances.map(async (instance) => {
      const { port } = await instance.waitFor((e) => e.event === 'listening', 30_000);
      instance.url = `http://127.0.0.1:${port}/webhooks`;
    }),
  );
  return instances;
}

/** Every handled payment_id across `instances`. */
export function allHandled(instances: readonly Instance[]): string[] {
  return instances.flatMap((instance) => instance.handled());
}

/** Counts of each value. */
export function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
