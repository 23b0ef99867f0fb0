/** What `dropPgBossQueue` needs of a `pg` pool or client. */
interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * Deletes a queue of payhook's PostgreSQL engine with its jobs and partition: pg-boss keeps them until deleted, and
 * every later process on the schema pays for them in maintenance. pg-boss 10's `delete_queue` drops the partition
 * only once no job refers to the queue, hence the jobs first. Nothing happens when the schema or the queue is absent.
 */
export async function dropPgBossQueue(db: Queryable, name: string, schema = 'payhook_queue'): Promise<void> {
  const { rows } = await db.query(`SELECT to_regclass('${schema}.queue') IS NOT NULL AS made`);
  if (rows[0]?.made !== true) return;
  await db.query(`DELETE FROM ${schema}.job WHERE name = $1`, [name]);
  await db.query(`SELECT ${schema}.delete_queue(name) FROM ${schema}.queue WHERE name = $1`, [name]);
}
