import { createHash } from 'node:crypto';
import { migrate, PostgresStore } from '@payhook/core/postgres';
import pg from 'pg';
import { DATABASE_URL, reachPostgres } from '../../../core/test/servers.ts';
import { createPostgresQueue } from '../../src/postgres.ts';
import type { EngineKit } from './kit.ts';

// Stall detection in about 3 s (a 2 s expiry, maintenance every second), polling every 500 ms, retries at once.

/**
 * One schema per test process, for pg-boss's tables and the stores' (dropped by `dispose`); set in the environment,
 * so the child workers this process starts use the same one.
 */
process.env.PAYHOOK_TEST_QUEUE_SCHEMA ??= `payhook_queue_suite_${process.pid}`;
const SCHEMA = process.env.PAYHOOK_TEST_QUEUE_SCHEMA;

export const kit: EngineKit = {
  id: 'postgres',
  title: 'PostgreSQL (pg-boss)',
  reach: reachPostgres,
  makeEngine(queue, options = {}) {
    const url = new URL(DATABASE_URL);
    if (options.port !== undefined) url.host = `127.0.0.1:${options.port}`;
    return createPostgresQueue({
      connectionString: url.href,
      max: 4,
      schema: SCHEMA,
      name: queue,
      attempts: options.attempts ?? 5,
      backoff: { type: 'fixed', delayMs: 0 },
      ...(options.slowStalls ? {} : { stallMs: 2_000, maintenanceIntervalMs: 1_000 }),
      pollingIntervalMs: 500,
      onError: () => {},
    });
  },
  async makeStore(prefix) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    pool.on('error', () => {});
    const table = `${SCHEMA}.store_${createHash('sha256').update(prefix).digest('hex').slice(0, 16)}`;
    // One statement string, one transaction: the lock keeps two processes from creating the schema at once.
    await pool.query(
      `SELECT pg_advisory_xact_lock(hashtext('payhook test schema')); CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
    );
    await migrate(pool, { table });
    return { store: new PostgresStore({ pool, table }), close: () => pool.end() };
  },
  server() {
    const url = new URL(DATABASE_URL);
    return { host: url.hostname, port: Number(url.port || 5432) };
  },
  async dispose() {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    } finally {
      await client.end();
    }
  },
};
