import { createHash } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import {
  createWebhookHandler,
  decodeData,
  MemoryStore,
  parseNotification,
  verifySignature,
  type WebhookHandler,
} from '@payhook/core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { Bench } from 'tinybench';
import { handWrittenHandling, handWrittenMinimum } from './minimum.js';
import { otelSubscriber } from './otel.js';
import {
  createIdSource,
  encodeData,
  formBody,
  limitBodies,
  notificationJson,
  SECRET,
  signData,
  signOctokit,
} from './payload.js';
import { rotate, type Spread, spread } from './stats.js';
import {
  FULL_OTEL_ROW,
  HANDLING_ROW,
  PLAIN_AT_LIMIT_ROW,
  REFUSED_AT_LIMIT_ROW,
  REFUSED_ROW,
  WORST_CASE_ROW,
} from './targets.js';

/** Calls per tinybench sample: amortises the clock's own cost (about 1 µs) over many microsecond-scale calls. */
const BATCH = 64;

export interface MicroOptions {
  rounds: number;
  /** Distinct deliveries every row walks through. */
  pool: number;
  /** Milliseconds each row runs per round. */
  timeMs: number;
}

/** A micro row: microseconds per call, median and range over the rounds. */
export interface MicroRow extends Spread {
  name: string;
  unit: 'µs';
}

/**
 * `batch`: calls per sample, when not `BATCH` (the size-limit rows take milliseconds a call). `around`: what the
 * row sets up before its runs and undoes after them (a diagnostics subscriber, which would slow every other row).
 */
type Task = {
  name: string;
  fn: () => unknown;
  batch?: number;
  around?: { beforeAll: () => void; afterAll: () => void | Promise<void> };
};

/** The handler's default `maxBodyBytes`: the size-limit rows' bodies are this long. */
const SIZE_LIMIT = 1024 * 1024;

let sink: unknown;

/**
 * The process's CPU time in milliseconds. Other engineers' processes preempt this one on a shared machine: wall
 * time per call then swings twofold while CPU time stays within a few percent.
 */
export function cpuNow(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** One delivery in every row's native form: the service's fields, the form body, and each peer's signed headers. */
interface Input {
  json: string;
  data: string;
  signature: string;
  body: Buffer;
  standardHeaders: Record<string, string>;
  svixHeaders: Record<string, string>;
  stripeHeader: string;
  octokitSignature: string;
}

const MESSAGE_ID = 'msg_2Lh9KRb0pzN4LePd3XiA0dMNsNe';

/**
 * Distinct deliveries (a fresh payment id each), the same pool for every row: each row reads as much cold
 * memory as the full handler, which needs a new notification per call so its store claims every one.
 */
function createInputs(size: number, standard: StandardWebhook, svix: SvixWebhook, stripe: Stripe): Input[] {
  const nextId = createIdSource();
  const timestamp = new Date(Math.floor(Date.now() / 1000) * 1000);
  const seconds = String(timestamp.getTime() / 1000);
  return Array.from({ length: size }, () => {
    const id = nextId();
    const json = notificationJson(id);
    const data = encodeData(id);
    const signature = signData(data);
    return {
      json,
      data,
      signature,
      body: Buffer.from(formBody(data, signature)),
      standardHeaders: {
        'webhook-id': MESSAGE_ID,
        'webhook-timestamp': seconds,
        'webhook-signature': standard.sign(MESSAGE_ID, timestamp, json),
      },
      svixHeaders: {
        'svix-id': MESSAGE_ID,
        'svix-timestamp': seconds,
        'svix-signature': svix.sign(MESSAGE_ID, timestamp, json),
      },
      stripeHeader: stripe.webhooks.generateTestHeaderString({ payload: json, secret: SECRET }),
      octokitSignature: signOctokit(json),
    };
  });
}

function fullHandlerTask(inputs: readonly Input[]): () => Promise<void> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  // With a handler, every notification is claimed and committed in the store (none is 'ignored'); past the
  // pool's end, a fresh handler and store, since the same notification again would be a duplicate.
  const fresh = (): WebhookHandler =>
    createWebhookHandler({ secret: SECRET, store: new MemoryStore(), handle: () => undefined });
  let handler = fresh();
  let index = 0;
  return async () => {
    for (let i = 0; i < BATCH; i++) {
      if (index === inputs.length) {
        index = 0;
        handler = fresh();
      }
      const result = await handler({ method: 'POST', headers, body: inputs[index++]!.body }, undefined);
      if (result.outcome !== 'handled') throw new Error(`full handler row answered ${result.outcome}`);
    }
  };
}

/**
 * The full handler on the pool's deliveries, each with a wrong signature of the right size: every call is refused
 * (401), so it costs what a forged or misconfigured delivery of normal size costs, diagnosis included.
 */
function refusedTask(inputs: readonly Input[]): () => Promise<void> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const bodies = inputs.map(({ data }) => Buffer.from(formBody(data, `${'A'.repeat(43)}=`)));
  const handler = createWebhookHandler({
    secret: SECRET,
    store: new MemoryStore(),
    logger: false,
    handle: () => undefined,
  });
  let index = 0;
  return async () => {
    for (let i = 0; i < BATCH; i++) {
      const result = await handler({ method: 'POST', headers, body: bodies[index]! }, undefined);
      if (result.outcome !== 'refused') throw new Error(`refused row answered ${result.outcome}`);
      index = index + 1 === bodies.length ? 0 : index + 1;
    }
  };
}

/** One call of a handler without a store on `body`, which must end as `outcome`. */
function sizeLimitTask(body: Buffer, outcome: 'handled' | 'refused'): () => Promise<void> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const handler = createWebhookHandler({
    secret: SECRET,
    store: false,
    logger: false,
    handle: () => undefined,
  });
  return async () => {
    const result = await handler({ method: 'POST', headers, body }, undefined);
    if (result.outcome !== outcome) throw new Error(`a size-limit row answered ${result.outcome}`);
  };
}

/** `handWrittenHandling` on the pool, with a fresh store whenever the full handler's row gets one. */
function handlingTask(inputs: readonly Input[]): () => void {
  let store = new MemoryStore();
  let index = 0;
  return () => {
    for (let i = 0; i < BATCH; i++) {
      if (index === inputs.length) {
        index = 0;
        store = new MemoryStore();
      }
      handWrittenHandling(inputs[index++]!.body, SECRET, store);
    }
  };
}

function storeTask(size: number): () => void {
  const nextId = createIdSource();
  let store = new MemoryStore();
  let count = 0;
  return () => {
    for (let i = 0; i < BATCH; i++) {
      // A fresh store as often as the full-handler row gets one, so both see maps of the same sizes.
      if (++count % size === 0) store = new MemoryStore();
      const key = `${nextId()}:purchase:success:1000`;
      const claim = store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error(`MemoryStore answered ${claim.status}`);
      store.commit(key, claim.token, 604_800_000);
    }
  };
}

async function createTasks(pool: number): Promise<Task[]> {
  const base64Secret = Buffer.from(SECRET).toString('base64');
  const standard = new StandardWebhook(base64Secret);
  const svix = new SvixWebhook(`whsec_${base64Secret}`);
  const stripe = new Stripe('sk_test_bench');
  const inputs = createInputs(pool, standard, svix, stripe);

  // Each row walks the pool on its own cursor, one input per call.
  const each = (fn: (input: Input) => unknown) => {
    let index = 0;
    return () => {
      for (let i = 0; i < BATCH; i++) {
        sink = fn(inputs[index]!);
        index = index + 1 === inputs.length ? 0 : index + 1;
      }
    };
  };
  const tasks: Task[] = [
    {
      name: 'payhook verifySignature + decodeData + parseNotification',
      fn: each(({ data, signature }) => {
        if (!verifySignature(data, signature, SECRET).valid) throw new Error('payhook refused the signature');
        return parseNotification(decodeData(data));
      }),
    },
    { name: 'payhook full core handler, MemoryStore', fn: fullHandlerTask(inputs) },
    (() => {
      const otel = otelSubscriber();
      return {
        name: FULL_OTEL_ROW,
        fn: fullHandlerTask(inputs),
        around: { beforeAll: otel.enable, afterAll: otel.disable },
      };
    })(),
    { name: REFUSED_ROW, fn: refusedTask(inputs) },
    {
      name: 'hand-written minimum',
      fn: each(({ data, signature }) => handWrittenMinimum(data, signature, SECRET)),
    },
    {
      // The floor of any verify + decode + parse: the minimum, then the typed notification.
      name: 'hand-written minimum + parseNotification',
      fn: each(({ data, signature }) =>
        parseNotification(handWrittenMinimum(data, signature, SECRET) as Record<string, unknown>),
      ),
    },
    { name: HANDLING_ROW, fn: handlingTask(inputs) },
    { name: 'MemoryStore claim + commit alone', fn: storeTask(pool) },
    ...(() => {
      const bodies = limitBodies(SIZE_LIMIT);
      return [
        { name: WORST_CASE_ROW, fn: sizeLimitTask(bodies.worst, 'refused'), batch: 1 },
        { name: PLAIN_AT_LIMIT_ROW, fn: sizeLimitTask(bodies.plain, 'handled'), batch: 1 },
        { name: REFUSED_AT_LIMIT_ROW, fn: sizeLimitTask(bodies.refused, 'refused'), batch: 1 },
      ];
    })(),
    {
      name: 'sha256(secret + data + secret) alone',
      fn: each(({ data }) => createHash('sha256').update(SECRET).update(data).update(SECRET).digest()),
    },
    { name: 'JSON.parse alone', fn: each(({ json }) => JSON.parse(json)) },
    {
      name: 'standardwebhooks verify',
      fn: each(({ json, standardHeaders }) => standard.verify(json, standardHeaders)),
    },
    { name: 'svix verify', fn: each(({ json, svixHeaders }) => svix.verify(json, svixHeaders)) },
    {
      name: 'stripe constructEvent',
      fn: each(({ json, stripeHeader }) => stripe.webhooks.constructEvent(json, stripeHeader, SECRET)),
    },
    {
      name: '@octokit/webhooks-methods verify + JSON.parse',
      fn: (() => {
        let index = 0;
        return async () => {
          for (let i = 0; i < BATCH; i++) {
            const { json, octokitSignature } = inputs[index]!;
            index = index + 1 === inputs.length ? 0 : index + 1;
            if (!(await octokitVerify(SECRET, json, octokitSignature))) {
              throw new Error('octokit refused the signature');
            }
            sink = JSON.parse(json);
          }
        };
      })(),
    },
  ];
  // Every row must accept its input before anything is timed.
  for (const task of tasks) {
    task.around?.beforeAll();
    await task.fn();
    await task.around?.afterAll();
  }
  return tasks;
}

/** Runs the micro rows in rotated order over the rounds; each row's figure is its mean CPU time per call. */
export async function runMicro(options: MicroOptions): Promise<MicroRow[]> {
  const tasks = await createTasks(options.pool);
  const samples = new Map<string, number[]>(tasks.map((task) => [task.name, []]));
  const batches = new Map(tasks.map((task) => [task.name, task.batch ?? BATCH]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      now: cpuNow,
      time: options.timeMs,
      warmupTime: Math.min(100, options.timeMs),
      throws: true,
    });
    for (const task of rotate(tasks, round)) bench.add(task.name, task.fn, task.around);
    await bench.run();
    for (const task of bench.tasks) {
      const mean = task.result?.latency.mean;
      if (mean === undefined) throw new Error(`no result for ${task.name}`);
      samples.get(task.name)!.push((mean * 1000) / batches.get(task.name)!);
    }
  }
  if (sink === undefined) throw new Error('the rows produced nothing');
  return tasks.map((task) => ({ name: task.name, unit: 'µs', ...spread(samples.get(task.name)!) }));
}
