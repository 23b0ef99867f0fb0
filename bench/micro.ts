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
import { handWrittenMinimum } from './minimum.js';
import {
  createDeliverySource,
  createIdSource,
  formBody,
  NOTIFICATION_JSON,
  SECRET,
  signOctokit,
} from './payload.js';
import { rotate, type Spread, spread } from './stats.js';

/** Calls per tinybench sample: amortises the clock's own cost (about 1 µs) over many microsecond-scale calls. */
const BATCH = 64;
/** Distinct pre-signed bodies for the full-handler row; past the end, a fresh handler and store take over. */
const POOL = 20_000;

export interface MicroOptions {
  rounds: number;
  /** Milliseconds each row runs per round. */
  timeMs: number;
}

/** A micro row: microseconds per call, median and range over the rounds. */
export interface MicroRow extends Spread {
  name: string;
  unit: 'µs';
}

type Task = { name: string; fn: () => unknown };

let sink: unknown;

/**
 * The process's CPU time in milliseconds. Other engineers' processes preempt this one on a shared machine: wall
 * time per call then swings twofold while CPU time stays within a few percent.
 */
export function cpuNow(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function fullHandlerTask(): () => Promise<void> {
  const next = createDeliverySource();
  const bodies: Buffer[] = [];
  for (let i = 0; i < POOL; i++) {
    const { data, signature } = next();
    bodies.push(Buffer.from(formBody(data, signature)));
  }
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const fresh = (): WebhookHandler => {
    // With a handler, every notification is claimed and committed in the store (none is 'ignored').
    return createWebhookHandler({ secret: SECRET, store: new MemoryStore(), handle: () => undefined });
  };
  let handler = fresh();
  let index = 0;
  return async () => {
    for (let i = 0; i < BATCH; i++) {
      if (index === POOL) {
        index = 0;
        handler = fresh();
      }
      const result = await handler({ method: 'POST', headers, body: bodies[index++] }, undefined);
      if (result.outcome !== 'handled') throw new Error(`full handler row answered ${result.outcome}`);
    }
  };
}

function storeTask(): () => void {
  const nextId = createIdSource();
  let store = new MemoryStore();
  let count = 0;
  return () => {
    for (let i = 0; i < BATCH; i++) {
      // A fresh store as often as the full-handler row gets one, so both see maps of the same sizes.
      if (++count % POOL === 0) store = new MemoryStore();
      const key = `${nextId()}:purchase:success:1000`;
      const claim = store.claim(key, 60_000);
      if (claim.status !== 'claimed') throw new Error(`MemoryStore answered ${claim.status}`);
      store.commit(key, claim.token, 604_800_000);
    }
  };
}

async function createTasks(): Promise<Task[]> {
  const { data, signature } = createDeliverySource()();
  const base64Secret = Buffer.from(SECRET).toString('base64');
  const standard = new StandardWebhook(base64Secret);
  const standardHeaders = {
    'webhook-id': 'msg_2Lh9KRb0pzN4LePd3XiA0dMNsNe',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': '',
  };
  standardHeaders['webhook-signature'] = standard.sign(
    standardHeaders['webhook-id'],
    new Date(Number(standardHeaders['webhook-timestamp']) * 1000),
    NOTIFICATION_JSON,
  );
  const svix = new SvixWebhook(`whsec_${base64Secret}`);
  const svixHeaders = {
    'svix-id': standardHeaders['webhook-id'],
    'svix-timestamp': standardHeaders['webhook-timestamp'],
    'svix-signature': svix.sign(
      standardHeaders['webhook-id'],
      new Date(Number(standardHeaders['webhook-timestamp']) * 1000),
      NOTIFICATION_JSON,
    ),
  };
  const stripe = new Stripe('sk_test_bench');
  const stripeHeader = stripe.webhooks.generateTestHeaderString({
    payload: NOTIFICATION_JSON,
    secret: SECRET,
  });
  const octokitSignature = signOctokit(NOTIFICATION_JSON);
  const full = fullHandlerTask();

  const sync = (fn: () => unknown) => () => {
    for (let i = 0; i < BATCH; i++) sink = fn();
  };
  const tasks: Task[] = [
    {
      name: 'payhook verifySignature + decodeData + parseNotification',
      fn: sync(() => {
        if (!verifySignature(data, signature, SECRET).valid) throw new Error('payhook refused the signature');
        return parseNotification(decodeData(data));
      }),
    },
    { name: 'payhook full core handler, MemoryStore', fn: full },
    { name: 'hand-written minimum', fn: sync(() => handWrittenMinimum(data, signature, SECRET)) },
    {
      // The floor of any verify + decode + parse: the minimum, then the typed notification.
      name: 'hand-written minimum + parseNotification',
      fn: sync(() =>
        parseNotification(handWrittenMinimum(data, signature, SECRET) as Record<string, unknown>),
      ),
    },
    { name: 'MemoryStore claim + commit alone', fn: storeTask() },
    {
      name: 'sha256(secret + data + secret) alone',
      fn: sync(() => createHash('sha256').update(SECRET).update(data).update(SECRET).digest()),
    },
    { name: 'JSON.parse alone', fn: sync(() => JSON.parse(NOTIFICATION_JSON)) },
    { name: 'standardwebhooks verify', fn: sync(() => standard.verify(NOTIFICATION_JSON, standardHeaders)) },
    { name: 'svix verify', fn: sync(() => svix.verify(NOTIFICATION_JSON, svixHeaders)) },
    {
      name: 'stripe constructEvent',
      fn: sync(() => stripe.webhooks.constructEvent(NOTIFICATION_JSON, stripeHeader, SECRET)),
    },
    {
      name: '@octokit/webhooks-methods verify + JSON.parse',
      fn: async () => {
        for (let i = 0; i < BATCH; i++) {
          if (!(await octokitVerify(SECRET, NOTIFICATION_JSON, octokitSignature))) {
            throw new Error('octokit refused the signature');
          }
          sink = JSON.parse(NOTIFICATION_JSON);
        }
      },
    },
  ];
  // Every row must accept its input before anything is timed.
  for (const task of tasks) await task.fn();
  return tasks;
}

/** Runs the micro rows in rotated order over the rounds; each row's figure is its mean CPU time per call. */
export async function runMicro(options: MicroOptions): Promise<MicroRow[]> {
  const tasks = await createTasks();
  const samples = new Map<string, number[]>(tasks.map((task) => [task.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    const bench = new Bench({
      now: cpuNow,
      time: options.timeMs,
      warmupTime: Math.min(100, options.timeMs),
      throws: true,
    });
    for (const task of rotate(tasks, round)) bench.add(task.name, task.fn);
    await bench.run();
    for (const task of bench.tasks) {
      const mean = task.result?.latency.mean;
      if (mean === undefined) throw new Error(`no result for ${task.name}`);
      samples.get(task.name)!.push((mean * 1000) / BATCH);
    }
  }
  if (sink === undefined) throw new Error('the rows produced nothing');
  return tasks.map((task) => ({ name: task.name, unit: 'µs', ...spread(samples.get(task.name)!) }));
}
