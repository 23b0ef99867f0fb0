// One webhook instance for the multi-process store tests, on the BUILT package (dist). Configured by env:
//   STORE=redis|postgres|inbox, CLIENT=ioredis|node-redis (redis), BATCH=0 (postgres: batch: false), REDIS_URL,
//   REDIS_CLUSTER (redis: a cluster's nodes, host:port,… instead of REDIS_URL), PREPARE=0 (postgres, inbox),
//   DATABASE_URL, PREFIX, TABLE,
//   APP_TABLE (inbox: the application's own table), LEASE_MS, HANDLER_MS, HANG_ON (a payment_id whose handler
//   never returns, for the SIGKILL test), SECRET.
// Prints one JSON line per event on stdout: listening {port}, hanging {payment_id}, handled {payment_id}.
import { createServer } from 'node:http';
import { createNodeListener, createWebhookHandler } from '@payhook/core';

const env = process.env;
const print = (event) => process.stdout.write(`${JSON.stringify({ ...event, pid: process.pid })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function createStore() {
  if (env.STORE === 'redis') {
    const { RedisStore } = await import('@payhook/core/redis');
    let client;
    const nodes = env.REDIS_CLUSTER?.split(',').map((node) => {
      const [host, port] = node.split(':');
      return { host, port: Number(port) };
    });
    if (nodes && env.CLIENT === 'node-redis') {
      const { createCluster } = await import('redis');
      client = createCluster({
        rootNodes: nodes.map(({ host, port }) => ({
          url: `redis://${host}:${port}`,
          disableOfflineQueue: true,
        })),
        defaults: { disableOfflineQueue: true },
      });
      client.on('error', () => {});
      await client.connect();
    } else if (nodes) {
      const { Cluster } = await import('ioredis');
      client = new Cluster(nodes, { enableOfflineQueue: false, redisOptions: { maxRetriesPerRequest: 1 } });
      client.on('error', () => {});
      await new Promise((resolve) => client.once('ready', resolve));
    } else if (env.CLIENT === 'node-redis') {
      const { createClient } = await import('redis');
      client = createClient({
        url: env.REDIS_URL,
        disableOfflineQueue: true,
        socket: { reconnectStrategy: () => 100 },
      });
      client.on('error', () => {});
      await client.connect();
    } else {
      const { Redis } = await import('ioredis');
      client = new Redis(env.REDIS_URL, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        retryStrategy: () => 100,
      });
      client.on('error', () => {});
      await client.connect();
    }
    return { store: new RedisStore({ client, prefix: env.PREFIX, timeoutMs: 1_000 }) };
  }
  const { default: pg } = await import('pg');
  const { PostgresInbox, PostgresStore } = await import('@payhook/core/postgres');
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 8, connectionTimeoutMillis: 2_000 });
  pool.on('error', () => {});
  const prepare = env.PREPARE !== '0';
  if (env.STORE === 'inbox') {
    const inbox = new PostgresInbox({ pool, table: env.TABLE, prepare });
    return { store: inbox, inbox };
  }
  return { store: new PostgresStore({ pool, table: env.TABLE, batch: env.BATCH !== '0', prepare }) };
}

const { store, inbox } = await createStore();
const webhook = createWebhookHandler({
  secret: env.SECRET,
  store,
  leaseMs: Number(env.LEASE_MS ?? 60_000),
  logger: false,
  handle: async (notification, _request, delivery) => {
    if (inbox) {
      await inbox
        .client(delivery)
        .query(`INSERT INTO ${env.APP_TABLE} (payment_id, pid) VALUES ($1, $2)`, [
          notification.payment_id,
          process.pid,
        ]);
    }
    if (notification.payment_id === env.HANG_ON) {
      print({ event: 'hanging', payment_id: notification.payment_id });
      await new Promise(() => {});
    }
    await sleep(Number(env.HANDLER_MS ?? 0));
    print({ event: 'handled', payment_id: notification.payment_id });
  },
});

const server = createServer(createNodeListener(webhook));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => print({ event: 'listening', port: server.address().port }));
