// The web process of the outbox test, killed with SIGKILL right after the inbox's COMMIT (issue 35): configured by
// env ENGINE (a kit of test/engines), QUEUE, INBOX (the inbox table), ORDERS (the shop's table) and BODY (a signed
// form body). It says `committed` once the inbox's transaction committed, then waits forever: on the PostgreSQL
// engine the job was written by that transaction; on BullMQ the enqueue, which comes after the commit, never starts.
import type { TransactionalStore } from '@payhook/core';
import { PostgresInbox } from '@payhook/core/postgres';
import pg from 'pg';
import { DATABASE_URL } from '../../core/test/servers.ts';
import type { EngineKit } from './engines/kit.ts';
import { shopWebhook } from './outbox-shop.ts';

const env = process.env;
const { kit } = (await import(`./engines/${env.ENGINE}.ts`)) as { kit: EngineKit };
const engine = kit.makeEngine(env.QUEUE!);
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
const inbox = new PostgresInbox({ pool, table: env.INBOX! });
const store: TransactionalStore = {
  name: inbox.name,
  transaction: async (key, work, options) => {
    await inbox.transaction(key, work, options);
    process.stdout.write('committed\n');
    return new Promise<never>(() => {});
  },
};
const webhook = shopWebhook(store, engine, pool, env.ORDERS!);
await webhook(
  { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: env.BODY! },
  undefined,
);
