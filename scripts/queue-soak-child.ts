/**
 * One process of `pnpm queue:soak`: `web` (verify and enqueue, answer at once) or `worker` (run the handlers). Both
 * build the same webhook: two handlers that each write one ledger row in the inbox's transaction, so a row exists
 * only if its handler's run committed. Configured by the environment the soak sets (SOAK_*).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler, type Delivery } from '@payhook/core';
import { PostgresInbox } from '@payhook/core/postgres';
import { createWorker, type QueueEngine } from '@payhook/queue';
import { Cluster } from 'ioredis';
import pg from 'pg';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (this script is started by scripts/queue-soak.ts)`);
  return value;
};
const role = process.argv[2];
const engineName = env('SOAK_ENGINE');
// A fleet reaches PostgreSQL through PgBouncer in transaction mode, where named statements cannot be kept.
const fleet = process.env.SOAK_FLEET === '1';
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
pool.on('error', () => {});
const inbox = new PostgresInbox({ pool, table: env('SOAK_INBOX'), ...(fleet ? { prepare: false } : {}) });
const queue = await openEngine();

async function openEngine(): Promise<QueueEngine> {
  const name = env('SOAK_QUEUE');
  if (engineName === 'postgres') {
    const { createPostgresQueue } = await import('@payhook/queue/postgres');
    // A killed worker's jobs move on within seconds, not production's minute and a half.
    return createPostgresQueue({
      connectionString: env('DATABASE_URL'),
      name,
      stallMs: 2_000,
      maintenanceIntervalMs: 1_000,
    });
  }
  const { createBullMQQueue } = await import('@payhook/queue/bullmq');
  const cluster = process.env.SOAK_REDIS_CLUSTER;
  return createBullMQQueue({
    // A cluster: its prefix is {bull}; a job is answered queued only once a replica holds it.
    connection: cluster
      ? new Cluster(
          cluster.split(',').map((port) => ({ host: '127.0.0.1', port: Number(port) })),
          { redisOptions: { maxRetriesPerRequest: null } },
        )
      : env('REDIS_URL'),
    ...(cluster ? { waitForReplicas: { replicas: 1, timeoutMs: 500 } } : {}),
    name,
    lockDurationMs: 2_000,
    stalledIntervalMs: 1_000,
  });
}

const ledger = env('SOAK_LEDGER');
const record = (handler: string) => async (_notification: unknown, _context: unknown, delivery: Delivery) => {
  await inbox
    .client(delivery)
    .query(`INSERT INTO ${ledger} (key, handler, pid) VALUES ($1, $2, $3)`, [
      delivery.key,
      handler,
      process.pid,
    ]);
};
// The context is the request on the web side and nothing in the worker: the handlers read neither.
const webhook = createWebhookHandler<IncomingMessage>({
  secret: env('SOAK_SECRET'),
  store: inbox,
  queue,
  logger: false,
})
  .onAny(record('fulfil'))
  .onAny(record('receipt'));

if (role === 'web') {
  const server = createServer(createNodeListener(webhook));
  server.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  process.on('SIGTERM', () => server.close(() => void queue.close().then(() => pool.end())));
} else if (role === 'worker') {
  const worker = await createWorker(webhook, queue, { concurrency: 8, stopOnSignals: false });
  console.log('worker ready');
  process.on(
    'SIGTERM',
    () =>
      void worker
        .stop()
        .then(() => worker.settled())
        .then(() => queue.close())
        .then(() => pool.end()),
  );
} else {
  throw new Error(`usage: queue-soak-child.ts web|worker, not ${role}`);
}
