// A worker process for the stall test: it consumes one job, says so, and then hangs in it until it is killed.
import { createPostgresQueue } from '../dist/postgres.js';

const queue = createPostgresQueue({
  connectionString: process.env.DATABASE_URL,
  schema: process.env.SCHEMA,
  name: process.env.QUEUE,
  stallSeconds: 2,
  maintenanceIntervalSeconds: 1,
  pollingIntervalSeconds: 0.5,
  onError: () => {},
});
await queue.consume(
  async (job, attempt) => {
    process.stdout.write(`${JSON.stringify({ running: job.key, attempt: attempt.number })}\n`);
    await new Promise(() => {});
  },
  { concurrency: 1 },
);
process.stdout.write('ready\n');
