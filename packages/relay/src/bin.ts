#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type BinConfig, HELP, parseBin, UsageError } from './bin-options.js';
import { channelKey } from './forward-header.js';
import type { Journal } from './journal/contract.js';
import { FileJournal } from './journal/file.js';
import { MemoryJournal } from './journal/memory.js';
import { createRelayServer } from './node.js';
import { createRelay } from './relay.js';

// `payhook-relay`: the relay as a Node.js server, configured from flags and the environment.

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

async function serve(config: BinConfig): Promise<void> {
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
  const scheme = tls ? 'https' : 'http';
  console.info(`payhook-relay listening on ${scheme}://${config.host}:${port} (journal: ${describe})`);
  if (!config.adminToken)
    console.info('payhook-relay: no PAYHOOK_RELAY_ADMIN_TOKEN, so no channel can be created');
  const stop = () => {
    server.close();
    server.closeAllConnections();
    void relay
      .close()
      .then(end)
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseBin>;
  try {
    parsed = parseBin(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`payhook-relay: ${error.message}\nRun 'payhook-relay --help' for usage.`);
    return 2;
  }
  if ('help' in parsed) {
    console.info(HELP);
    return 0;
  }
  if ('key' in parsed) {
    console.info(await channelKey(parsed.signingSecret, parsed.key));
    return 0;
  }
  await serve(parsed);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(`payhook-relay: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
