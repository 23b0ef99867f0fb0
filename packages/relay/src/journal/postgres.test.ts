import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { CuttableProxy, DATABASE_URL, reachPostgres } from '../../../core/test/servers.ts';
import { describeJournal, entry } from '../../test/journal-suite.js';
import { PostgresJournal, relayMigrationSql } from './postgres.js';

const reachable = await reachPostgres();
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
const prefixes: string[] = [];
let current = '';

afterAll(async () => {
  for (const prefix of prefixes) {
    await pool.query(`DROP TABLE IF EXISTS "${prefix}_events", "${prefix}_channels"`);
  }
  await pool.end();
});

function nextPrefix(): string {
  current = `payhook_relay_t${process.pid}_${prefixes.length}`;
  prefixes.push(current);
  return current;
}

describe.skipIf(!reachable)('PostgresJournal', () => {
  describeJournal('PostgresJournal', {
    open: (setup) => PostgresJournal.open({ db: pool, prefix: nextPrefix(), ...setup }),
    reopen: (setup) => PostgresJournal.open({ db: pool, prefix: current, ...setup }),
  });

  it('runs its migration again without harm, from instances starting together', async () => {
    const prefix = nextPrefix();
    await Promise.all([1, 2, 3].map(() => pool.query(relayMigrationSql(prefix))));
    const journal = await PostgresJournal.open({ db: pool, prefix });
    expect(await journal.createChannel({ name: 'alice', tokenHash: 'h', createdAt: 1 })).toBe(true);
  });

  it('deletes what retention no longer keeps with prune()', async () => {
    const prefix = nextPrefix();
    const journal = await PostgresJournal.open({ db: pool, prefix, retention: { maxEvents: 2 } });
    await journal.createChannel({ name: 'alice', tokenHash: 'h', createdAt: 1 });
    for (let n = 1; n <= 5; n++) await journal.append('alice', entry(n));
    await journal.prune();
    const { rows } = await pool.query(`SELECT sequence FROM "${prefix}_events" ORDER BY sequence`);
    expect(rows.map((row) => Number(row.sequence))).toEqual([4, 5]);
  });

  it('refuses a prefix that is not a plain identifier', async () => {
    await expect(PostgresJournal.open({ db: pool, prefix: 'x; DROP TABLE y' })).rejects.toThrow(TypeError);
  });

  it('rejects an append while the database is cut off, and the sequence is not spent', async () => {
    const prefix = nextPrefix();
    const url = new URL(DATABASE_URL);
    const proxy = await CuttableProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    const cut = new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 1_000 });
    cut.on('error', () => {});
    try {
      const journal = await PostgresJournal.open({ db: cut, prefix });
      await journal.createChannel({ name: 'alice', tokenHash: 'h', createdAt: 1 });
      expect(await journal.append('alice', entry(1))).toBe(1);
      proxy.cut();
      await expect(journal.append('alice', entry(2))).rejects.toThrow();
      proxy.restore();
      expect(await journal.append('alice', entry(3))).toBe(2);
    } finally {
      await cut.end();
      await proxy.close();
    }
  });
});
