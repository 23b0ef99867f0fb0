import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../../../examples/shared/src/child.ts';
import { purchase, refund } from '../../../examples/shared/src/deliveries.ts';
import { dropPgBossQueue } from '../../../test/support/pg-boss-queue.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { DATABASE_URL, REDIS_URL, reachPostgres, reachRedis } from '../../core/test/servers.ts';

const SECRET = 'queue-example-secret';
const DIST = ['core', 'express', 'queue'].map((name) => `../../${name}/dist/index.js`);
const engines = [
  { name: 'bullmq', up: await reachRedis(), env: { REDIS_URL } },
  { name: 'postgres', up: await reachPostgres(), env: { QUEUE: 'postgres', DATABASE_URL } },
];

// examples/queue as `npm start` and `npm run worker` run it, over the built packages, on each engine.
describe.each(engines)('examples/queue on $name', ({ up, env }) => {
  const running: RunningExample[] = [];

  beforeAll(() => {
    const missing = DIST.filter((path) => !existsSync(fileURLToPath(new URL(path, import.meta.url))));
    if (missing.length > 0)
      throw new Error(`build the packages first (pnpm build): missing ${missing.join(', ')}`);
  });

  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((example) => example.stop()));
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it.skipIf(!up)(
    'answers 200 queued at once, the worker prints the notification once, both exit 0',
    async () => {
      const run = randomBytes(4).toString('hex');
      const shared = {
        ...env,
        PAYHOOK_QUEUE: `payhook-example-test-${run}`,
        PAYHOOK_PREFIX: `payhook-example-test-${run}:`,
        PAYHOOK_TABLE: `payhook_example_test_${run}`,
      };
      cleanups.push(() => dropQueue(shared));
      const web = await startExample('queue', SECRET, 30_000, { env: shared });
      running.push(web);
      const post = (body: string) =>
        fetch(`${web.url}/webhooks`, { method: 'POST', headers: { 'content-type': FORM }, body });
      const delivery = signedForm(refund({ operation_id: `op-${run}` }), SECRET);

      const first = await post(delivery);
      expect([first.status, await first.text()]).toEqual([200, '{"ok":true,"outcome":"queued"}']);
      const copy = await post(delivery);
      expect([copy.status, await copy.text()]).toEqual([200, '{"ok":true,"outcome":"duplicate"}']);
      expect((await post(signedForm(purchase(), 'not the secret'))).status).toBe(401);

      // The worker starts only now: the answers above cannot have waited for a handler.
      // The worker starts only now: the answers above cannot have waited for a handler.
      const worker = await startExample('queue', SECRET, 30_000, { script: 'src/worker.ts', env: shared });
      running.push(worker);
      const [line] = await worker.waitForLines(1);
      expect(line).toMatchObject({
        operation_id: `op-${run}`,
        method: 'refund',
        key: `op-${run}:refund:success:1000`,
      });

      running.splice(0);
      expect(await web.stop()).toEqual({ code: 0, signal: null });
      expect(await worker.stop()).toEqual({ code: 0, signal: null });
      expect(worker.lines).toHaveLength(1);
    },
  );
});

/** What a run left on its server: the PostgreSQL table and pg-boss queue, or BullMQ's and the store's keys. */
async function dropQueue(env: NodeJS.ProcessEnv): Promise<void> {
  if (env.QUEUE === 'postgres') {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(`DROP TABLE IF EXISTS ${env.PAYHOOK_TABLE}`);
      await dropPgBossQueue(client, env.PAYHOOK_QUEUE!);
    } finally {
      await client.end();
    }
    return;
  }
  const redis = new Redis(REDIS_URL);
  try {
    for (const pattern of [`bull:${env.PAYHOOK_QUEUE}:*`, `${env.PAYHOOK_PREFIX}*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}
