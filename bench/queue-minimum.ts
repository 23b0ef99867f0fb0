// The hand-written minimum of a queued webhook in the framework of `examples/queue` (Express 5): verify by hand,
// enqueue once per notification on the same engine, answer 200. What the warm burst row compares payhook's web
// process with. Run as a child by `queue-burst.ts`: QUEUE=bullmq|postgres, REDIS_URL, DATABASE_URL, PAYHOOK_QUEUE.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import express from 'express';
import PgBoss from 'pg-boss';
import { handWrittenMinimum } from './minimum.js';
import { SECRET } from './payload.js';
import { PGBOSS_SCHEMA } from './queue-engines.js';

const name = process.env.PAYHOOK_QUEUE ?? 'payhook-bench-minimum';

/** The enqueue: one job per notification key (a copy is not queued twice), resolved once the engine holds it. */
async function openEnqueue(): Promise<(key: string, job: unknown) => Promise<unknown>> {
  if (process.env.QUEUE === 'postgres') {
    const boss = new PgBoss({
      connectionString: process.env.DATABASE_URL!,
      schema: PGBOSS_SCHEMA,
      supervise: false,
    });
    boss.on('error', () => {});
    await boss.start();
    await boss.createQueue(name);
    // pg-boss inserts with ON CONFLICT DO NOTHING: a copy's id (the key's digest as a UUID) is not queued twice.
    return (key, job) => boss.send(name, job as object, { id: uuidOf(key) });
  }
  const queue = new Queue(name, { connection: { url: process.env.REDIS_URL! } });
  return (key, job) =>
    queue.add('notification', job, { jobId: createHash('sha1').update(key).digest('hex') });
}

function uuidOf(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const enqueue = await openEnqueue();
const app = express();
app.post('/webhooks', express.urlencoded({ extended: false }), async (req, res) => {
  const { data, signature } = req.body as { data?: string; signature?: string };
  let notification: { order_id?: string; payment_id?: string; method?: string; status?: string };
  try {
    notification = handWrittenMinimum(String(data), String(signature), SECRET) as typeof notification;
  } catch {
    res.status(401).json({ ok: false });
    return;
  }
  const key = `${notification.payment_id}:${notification.method}:${notification.status}`;
  try {
    await enqueue(key, notification);
    res.json({ ok: true });
  } catch {
    res.status(503).json({ ok: false });
  }
});
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.on('SIGTERM', () => process.exit(0));
