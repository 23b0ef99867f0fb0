import { setTimeout as sleep } from 'node:timers/promises';
import {
  createWebhookHandler,
  type DedupeStore,
  type NotificationQueue,
  type WebhookHandler,
} from '@payhook/core';
import { createWorker, type QueueEngine } from '@payhook/queue';
import { percentiles } from './limits.js';
import { createDeliverySource, formBody, SECRET } from './payload.js';
import { type Backend, DATABASE_URL, postgresBackend, REDIS_URL, redisBackend } from './queue-backends.js';
import { burst, startExample, startMinimum, startWorkers, warmBursts } from './queue-burst.js';
import {
  bullmqAlone,
  claimAndCommit,
  pgBossAlone,
  queuedElsewhere,
  timeWorker,
  type WorkerRun,
} from './queue-engines.js';
import { rotate, type Spread, spread } from './stats.js';
import { WARM_BURST, WORKER_ROWS } from './targets.js';

export interface QueueBenchOptions {
  rounds: number;
  /** Webhooks answered per row per round, at each of `inFlight` at a time. */
  requests: number;
  inFlight: readonly number[];
  /** How long the application's handler takes (its work: a courier call, an email). */
  workMs: number;
  /** Jobs queued, then run through one worker, per worker row phase: a second or more of work. */
  jobs: number;
  /**
   * Phases of each worker row per round, all rows rotated each time: a phase's CPU per job moves by a quarter from
   * one phase to the next here, so the worker ratios are medians of `rounds` × `workerPhases` pairs.
   */
  workerPhases: number;
  /** The worker's concurrency (pg-boss rows: its batch) for the worker rows. */
  concurrency: number;
  /** Distinct webhooks sent at once over HTTP to `examples/queue`, after `warmup` one after another. */
  burst: number;
  warmup: number;
  /** Warm bursts (40 notifications x 3 copies) to payhook's example and to the hand-written minimum, each, per round. */
  warmPairs: number;
}

/**
 * A queue row: a webhook's answer latency (p50 and p99, ms, medians over the rounds), or a worker row's jobs per
 * second or CPU per job (µs of the process's CPU over the worker phase).
 */
export interface QueueRow extends Spread {
  name: string;
  unit: 'ms' | 'jobs/s' | 'µs CPU/job';
  p99?: Spread;
}

/** The webhook a row answers with: the store, the queue when given, and a handler that works `workMs`. */
function webhookWith(store: DedupeStore, queue: NotificationQueue | undefined, workMs: number) {
  return createWebhookHandler({ secret: SECRET, store, queue, logger: false }).onAny(async () => {
    if (workMs > 0) await sleep(workMs);
  });
}

/** Answers `requests` fresh deliveries, `inFlight` at a time; each answer's latency in ms. */
async function answerLatencies(
  webhook: WebhookHandler,
  requests: number,
  inFlight: number,
): Promise<number[]> {
  const next = createDeliverySource();
  const latencies: number[] = [];
  let sent = 0;
  const lane = async () => {
    while (sent++ < requests) {
      const { data, signature } = next();
      const body = formBody(data, signature);
      const started = performance.now();
      const result = await webhook(
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
        undefined,
      );
      if (result.status !== 200) throw new Error(`the bench webhook answered ${result.status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return latencies;
}

/** What takes a worker row's queued jobs: `ran` is called once per job done (by the webhook's handler or by itself). */
type Taker = (webhook: WebhookHandler, ran: () => void) => Promise<{ stop(): Promise<void> }>;

/** Queues `jobs` notifications through payhook's webhook in a process of its own, then times `take` running them all. */
async function queuedThenTaken(
  backend: Backend,
  queue: QueueEngine,
  queueName: string,
  options: QueueBenchOptions,
  take: Taker,
): Promise<WorkerRun> {
  let done = 0;
  let finished: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const ran = () => {
    if (++done === options.jobs) finished();
  };
  const webhook = createWebhookHandler({ secret: SECRET, store: backend.store, queue, logger: false }).onAny(
    ran,
  );
  const { engine, url } = backend;
  await queuedElsewhere({ engine, via: 'payhook', url, name: queueName, jobs: options.jobs });
  const stop = timeWorker(options.jobs);
  const taker = await take(webhook, ran);
  await all;
  const run = stop();
  await taker.stop();
  return run;
}

/** payhook's worker running the queued notifications' handlers. */
function payhookWorker(
  backend: Backend,
  queue: QueueEngine,
  queueName: string,
  options: QueueBenchOptions,
): Promise<WorkerRun> {
  return queuedThenTaken(backend, queue, queueName, options, (webhook) =>
    createWorker(webhook, queue, { concurrency: options.concurrency, stopOnSignals: false, logger: false }),
  );
}

/**
 * payhook's consumer of the engine (`queue.consume`, under `createWorker`) doing only the floor's work, the store's
 * claim and commit, without the webhook: the engine adapter beside the floor, the webhook's run beside the worker.
 */
function payhookConsumer(
  backend: Backend,
  queue: QueueEngine,
  queueName: string,
  options: QueueBenchOptions,
): Promise<WorkerRun> {
  const work = claimAndCommit(backend.store);
  return queuedThenTaken(backend, queue, queueName, options, async (_webhook, ran) => {
    const consumer = await queue.consume(
      async () => {
        await work();
        ran();
      },
      { concurrency: options.concurrency },
    );
    return { stop: () => consumer.stop(0) };
  });
}

/** Each row's per-round values: p50 and p99 of the latency rows, jobs per second of the worker rows. */
class Figures {
  readonly p50 = new Map<string, number[]>();
  readonly p99 = new Map<string, number[]>();
  readonly rates = new Map<string, number[]>();
  readonly cpu = new Map<string, number[]>();

  add(map: Map<string, number[]>, key: string, value: number): void {
    map.set(key, [...(map.get(key) ?? []), value]);
  }

  worker(row: string, run: WorkerRun): string {
    this.add(this.rates, row, run.rate);
    this.add(this.cpu, row, run.cpuUsPerJob);
    return `${row}: ${Math.round(run.rate)} jobs/s, ${run.cpuUsPerJob.toFixed(1)} µs CPU per job`;
  }

  latency(row: string, latency: { p50: number; p99: number }): string {
    this.add(this.p50, row, latency.p50);
    this.add(this.p99, row, latency.p99);
    return `${row}: p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms`;
  }

  rows(options: QueueBenchOptions): QueueRow[] {
    const rows: QueueRow[] = [];
    for (const [name, values] of this.p50) {
      const handler = name.includes('burst') ? '' : `, handler ${options.workMs} ms`;
      rows.push({
        name: `${name}: answer latency${handler}`,
        unit: 'ms',
        ...spread(values),
        p99: spread(this.p99.get(name)!),
      });
    }
    const worker = ` (concurrency ${options.concurrency}, ${options.jobs} jobs)`;
    for (const [name, values] of this.rates) {
      rows.push({ name: `${name}${worker}: jobs per second`, unit: 'jobs/s', ...spread(values) });
    }
    for (const [name, values] of this.cpu) {
      rows.push({ name: `${name}${worker}: CPU per job`, unit: 'µs CPU/job', ...spread(values) });
    }
    return rows;
  }
}

/** One round of one engine: the answer latency rows, the worker's jobs per second, the engine alone, the burst. */
async function backendRound(
  backend: Backend,
  round: number,
  options: QueueBenchOptions,
  figures: Figures,
  log: (line: string) => void,
): Promise<void> {
  const queueName = `payhook-bench-${Date.now()}-${round}`;
  const queue = await backend.open(queueName);
  const say = (line: string) => log(`  round ${round + 1}: ${line}`);
  try {
    for (const inFlight of options.inFlight) {
      for (const [way, webhook] of [
        ['handled inline', webhookWith(backend.store, undefined, options.workMs)],
        ['queued', webhookWith(backend.store, queue, options.workMs)],
      ] as const) {
        await answerLatencies(webhook, inFlight * 5, inFlight); // warm-up: connections, scripts
        const latency = percentiles(await answerLatencies(webhook, options.requests, inFlight));
        say(figures.latency(`${backend.name}, ${inFlight} in flight: ${way}`, latency));
      }
    }
    await backend.clean(queueName);
    if (round === 0) {
      // One untimed phase of each row first: the first phase of a row compiles its code (payhook's worker, first in
      // round one, cost up to 1.8× its later phases), and the latency rows' garbage is collected during it.
      for (const [, run] of workerRows(backend, queue, queueName, options)) await run();
    }
    // Rotated round after round: no worker row always runs first, on a machine whose load moves by the minute.
    for (let phase = 0; phase < options.workerPhases; phase++) {
      const rows = workerRows(backend, queue, queueName, options);
      for (const [row, run] of rotate(rows, round * options.workerPhases + phase)) {
        say(figures.worker(row, await run()));
      }
    }
    const answers = await burstRow(backend, `${queueName}-burst`, options);
    say(figures.latency(`${backend.name}, burst of ${options.burst} over HTTP (examples/queue)`, answers));
    const [payhook, minimum] = await warmBurstRows(backend, `${queueName}-warm`, options);
    for (const [row, bursts] of [
      [`${backend.name}, ${WARM_BURST} to examples/queue, two workers running`, payhook!],
      [`${backend.name}, ${WARM_BURST} to the hand-written minimum (Express)`, minimum!],
    ] as const) {
      for (const latency of bursts) say(figures.latency(row, latency));
    }
  } finally {
    await queue.close();
    await backend.drop(queueName);
  }
}

/**
 * The queue rows: per engine, the answer latency of a webhook whose handler works `workMs`, handled inline with the
 * engine's own store vs queued, jobs per second through one worker and through the engine alone, and a burst over
 * HTTP to `examples/queue`. Engines whose server is down are skipped.
 */
export async function runQueue(
  options: QueueBenchOptions,
  log: (line: string) => void,
): Promise<{ rows: QueueRow[]; skipped: { name: string; reason: string }[] }> {
  const backends: Backend[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const [name, open] of [
    ['BullMQ (Redis)', redisBackend],
    ['PostgreSQL (pg-boss)', postgresBackend],
  ] as const) {
    try {
      backends.push(await open());
    } catch (error) {
      skipped.push({ name, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  const figures = new Figures();
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const backend of rotate(backends, round))
        await backendRound(backend, round, options, figures, log);
    }
  } finally {
    for (const backend of backends) await backend.close();
  }
  return { rows: figures.rows(options), skipped };
}

/** The worker rows: payhook's worker and consumer on `queue` (named `queueName`), the engine alone and its floor. */
function workerRows(
  backend: Backend,
  queue: QueueEngine,
  queueName: string,
  options: QueueBenchOptions,
): [string, () => Promise<WorkerRun>][] {
  return [
    [`${backend.name}: ${WORKER_ROWS.payhook}`, () => payhookWorker(backend, queue, queueName, options)],
    [`${backend.name}: ${WORKER_ROWS.consumer}`, () => payhookConsumer(backend, queue, queueName, options)],
    ...engineRows(backend, `${queueName}-alone`, options),
  ];
}

/**
 * The engine alone and the engine whose jobs do the store's claim and commit (the floor under payhook's worker),
 * on the same server with the same jobs and concurrency as payhook's worker row.
 */
function engineRows(
  backend: Backend,
  name: string,
  options: QueueBenchOptions,
): [string, () => Promise<WorkerRun>][] {
  const run = { jobs: options.jobs, concurrency: options.concurrency };
  const floor = { ...run, work: claimAndCommit(backend.store) };
  if (backend.engine === 'bullmq') {
    return [
      [`${backend.name}: ${WORKER_ROWS.bullmq}`, () => bullmqAlone(backend.url, name, run)],
      [`${backend.name}: ${WORKER_ROWS.bullmqFloor}`, () => bullmqAlone(backend.url, `${name}-floor`, floor)],
    ];
  }
  return [
    [`${backend.name}: ${WORKER_ROWS.pgboss}`, () => pgBossAlone(backend.url, `${name}-loop`, run)],
    [`${backend.name}: ${WORKER_ROWS.pgbossFloor}`, () => pgBossAlone(backend.url, `${name}-floor`, floor)],
  ];
}

/**
 * Warm bursts over kept-alive connections, alternating between `examples/queue`'s web process (its two workers
 * running) and the hand-written minimum on the same engine: p50 and p99 of each burst, payhook's then the minimum's.
 */
async function warmBurstRows(backend: Backend, name: string, options: QueueBenchOptions) {
  const env = { REDIS_URL, DATABASE_URL, name };
  const [web, workers, minimum] = await Promise.all([
    startExample(backend.engine, env),
    startWorkers(backend.engine, env, 2),
    startMinimum(backend.engine, env),
  ]);
  try {
    return await warmBursts([web.url, minimum.url], {
      pairs: options.warmPairs,
      notifications: 40,
      copies: 3,
    });
  } finally {
    await Promise.all([web.stop(), workers.stop(), minimum.stop()]);
    await backend.drop(name);
    await backend.drop(`${name}-minimum`);
  }
}

/** The burst over HTTP to `examples/queue`'s web process on this backend's engine: p50 and p99 of the answers. */
async function burstRow(backend: Backend, name: string, options: QueueBenchOptions) {
  const server = await startExample(backend.engine, { REDIS_URL, DATABASE_URL, name });
  try {
    return await burst(server.url, options.warmup, options.burst);
  } finally {
    await server.stop();
    await backend.drop(name);
  }
}
