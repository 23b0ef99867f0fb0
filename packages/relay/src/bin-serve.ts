import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type BinConfig, UsageError } from './bin-options.js';
import type { Journal } from './journal/contract.js';
import { FileJournal } from './journal/file.js';
import { MemoryJournal } from './journal/memory.js';
import { createRelayServer } from './node.js';
import { createRelay } from './relay.js';

// What `payhook-relay` runs once its arguments are read: the journal they name, the relay over it, the server.

async function openJournal(
  config: BinConfig,
): Promise<{ journal: Journal; describe: string; end?: () => Promise<void> }> {
  const { journal: choice, retention } = config;
  if (choice.kind === 'memory')
    return { journal: new MemoryJournal({ retention }), describe: 'memory (lost on exit)' };
  if (choice.kind === 'file') {
    const journal = await FileJournal.open({ directory: choice.directory, retention });
    return { journal, describe: `file ${choice.directory}` };
  }
  if (choice.kind === 'redis') return openRedis(choice.url, config);
  if (choice.kind === 'redis-cluster') return openRedisCluster(choice, config);
  let Pool: typeof import('pg').Pool;
  try {
    Pool = (await import('pg')).default.Pool;
  } catch {
    throw new UsageError('a postgres:// journal needs the pg package: npm install pg');
  }
  const pool = new Pool({ connectionString: choice.connectionString, max: 10 });
  pool.on('error', () => {});
  const { PostgresJournal } = await import('./journal/postgres.js');
  const journal = await PostgresJournal.open({
    db: pool,
    retention,
    ...(choice.prefix ? { prefix: choice.prefix } : {}),
  });
  return { journal, describe: 'postgres', end: () => pool.end() };
}

async function openRedis(url: string, config: BinConfig) {
  let Redis: typeof import('ioredis').Redis;
  try {
    Redis = (await import('ioredis')).Redis;
  } catch {
    throw new UsageError('a redis:// journal needs the ioredis package: npm install ioredis');
  }
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  const { RedisJournal } = await import('./journal/redis.js');
  const journal = new RedisJournal({ client, retention: config.retention });
  return { journal, describe: 'redis', end: async () => void (await client.quit()) };
}

async function openRedisCluster(
  choice: Extract<BinConfig['journal'], { kind: 'redis-cluster' }>,
  config: BinConfig,
) {
  let Cluster: typeof import('ioredis').Cluster;
  try {
    Cluster = (await import('ioredis')).Cluster;
  } catch {
    throw new UsageError('a redis+cluster:// journal needs the ioredis package: npm install ioredis');
  }
  const { nodes, username, password, tls } = choice;
  const client = new Cluster(nodes, {
    redisOptions: {
      maxRetriesPerRequest: 1,
      ...(username ? { username } : {}),
      ...(password === undefined ? {} : { password }),
      ...(tls ? { tls: {} } : {}),
    },
  });
  client.on('error', () => {});
  const { RedisJournal } = await import('./journal/redis.js');
  const journal = new RedisJournal({ client, retention: config.retention });
  return { journal, describe: 'redis cluster', end: async () => void (await client.quit()) };
}

/** A running relay server: its address, and `close` (server, relay, journal and its client). */
export interface RunningRelay {
  readonly url: string;
  close(): Promise<void>;
}

/** Opens the journal, builds the relay and listens; logs the address and the journal's kind (never a secret). */
export async function startRelay(
  config: BinConfig,
  log: (line: string) => void = console.info,
): Promise<RunningRelay> {
  const { journal, describe, end } = await openJournal(config);
  const relay = createRelay({
    journal,
    signingSecret: config.signingSecret,
    adminToken: config.adminToken,
    publicUrl: config.publicUrl,
    allowedSenders: config.allowedSenders,
    trustProxy: config.trustProxy,
    ...(config.verifySecret ? { verifySignature: { secret: config.verifySecret } } : {}),
  });
  const tls = config.tls && { cert: readFileSync(config.tls.cert), key: readFileSync(config.tls.key) };
  const server = createRelayServer(relay, tls ? { tls } : undefined);
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `${tls ? 'https' : 'http'}://${config.host}:${port}`;
  log(`payhook-relay listening on ${url} (journal: ${describe})`);
  if (!config.adminToken) log('payhook-relay: no PAYHOOK_RELAY_ADMIN_TOKEN, so no channel can be created');
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await relay.close();
      await end?.();
    },
  };
}
