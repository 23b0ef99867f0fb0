// The web side of a worker row, in a process of its own as in production: queues `jobs` notifications, then says
// so over IPC and exits. `payhook`: through payhook's webhook and queue engine, as a delivery is; `engine`: the
// engine's own `add`/`send` of the decoded notification, as the hand-written minimum does.
import { createWebhookHandler } from '@payhook/core';
import { createBullMQQueue } from '@payhook/queue/bullmq';
import { createPostgresQueue } from '@payhook/queue/postgres';
import { Queue } from 'bullmq';
import PgBoss from 'pg-boss';
import { createDeliverySource, createIdSource, formBody, notificationJson, SECRET } from './payload.js';

/** What the parent asks for: `argv[2]`, as JSON. */
export interface EnqueueRequest {
  engine: 'bullmq' | 'postgres';
  via: 'payhook' | 'engine';
  /** The Redis URL (BullMQ) or the PostgreSQL connection string. */
  url: string;
  name: string;
  jobs: number;
  /** pg-boss's schema of the engine rows. */
  schema?: string;
}

/** Runs `send` `count` times, `inFlight` at a time. */
async function inLanes(count: number, inFlight: number, send: () => Promise<unknown>): Promise<void> {
  let sent = 0;
  const lane = async () => {
    while (sent++ < count) await send();
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

async function viaPayhook(request: EnqueueRequest): Promise<void> {
  const queue =
    request.engine === 'bullmq'
      ? createBullMQQueue({ connection: request.url, name: request.name })
      : createPostgresQueue({ connectionString: request.url, name: request.name });
  const webhook = createWebhookHandler({ secret: SECRET, queue, logger: false }).onAny(() => {});
  const next = createDeliverySource();
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  try {
    await inLanes(request.jobs, 20, async () => {
      const { data, signature } = next();
      const result = await webhook({ method: 'POST', headers, body: formBody(data, signature) }, undefined);
      if (result.status !== 200) throw new Error(`the bench webhook answered ${result.status}`);
    });
  } finally {
    await queue.close();
  }
}

/** The decoded notification under an id of its own (its payment id), as `queue-minimum.ts` queues it. */
async function viaEngine(request: EnqueueRequest): Promise<void> {
  const nextId = createIdSource();
  const notification = (id: string) => JSON.parse(notificationJson(id)) as Record<string, unknown>;
  if (request.engine === 'bullmq') {
    const queue = new Queue(request.name, { connection: { url: request.url } });
    try {
      await inLanes(request.jobs, 20, () => {
        const id = nextId();
        return queue.add('notification', notification(id), { jobId: `k.${id}` });
      });
    } finally {
      await queue.close();
    }
    return;
  }
  const boss = new PgBoss({ connectionString: request.url, schema: request.schema, supervise: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    await inLanes(request.jobs, 20, () => {
      const id = nextId();
      return boss.send(request.name, notification(id), { id });
    });
  } finally {
    await boss.stop({ graceful: false });
  }
}

const request = JSON.parse(process.argv[2]!) as EnqueueRequest;
await (request.via === 'payhook' ? viaPayhook(request) : viaEngine(request));
process.send!('queued');
