import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateLedger, PostgresLedgerStore } from '@payhook/payments/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, reachPostgres } from '../../../core/test/servers.js';
import { fakePurchase } from '../fixtures/primary.js';
import { inspectCommand } from './inspect.js';
import { memoryIO } from './io.js';

const postgresUp = await reachPostgres();

describe('payhook inspect', () => {
  let dir: string;
  let capture: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-cli-'));
    capture = join(dir, 'deliveries.jsonl');
    await writeFile(capture, '');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints the address with its token, serves the page until stopped, and exits 0', async () => {
    const { io, out, err } = memoryIO('', {});
    const stop = new AbortController();
    const done = inspectCommand([capture], io, stop.signal);
    await expect.poll(() => out.length).toBeGreaterThan(0);
    const url = /^payhook inspect: open (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32})$/.exec(out[0]!)?.[1];
    expect(url).toBeDefined();
    expect(out[1]).toBe('replay is off: pass --resign SECRET (the test secret) or set PAYHOOK_SECRET.');
    expect((await fetch(url!)).status).toBe(200);
    expect((await fetch(url!.replace(/\?token=.*/, ''))).status).toBe(403);
    stop.abort();
    expect(await done).toBe(0);
    expect(err).toEqual([]);
  });

  it('takes any TCP port, 10000 and above included', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    expect(port).toBeGreaterThan(10_000);
    const { io, out, err } = memoryIO('', {});
    const stop = new AbortController();
    const done = inspectCommand([capture, '--port', String(port)], io, stop.signal);
    await expect.poll(() => out.length + err.length).toBeGreaterThan(0);
    expect(err).toEqual([]);
    expect(out[0]).toMatch(new RegExp(`^payhook inspect: open http://127\\.0\\.0\\.1:${port}/\\?token=`));
    stop.abort();
    expect(await done).toBe(0);
  });

  it.each([['65536'], ['-1'], ['80.5']])('refuses --port %s with exit 2', async (port) => {
    const { io, err } = memoryIO('', {});
    expect(await inspectCommand([capture, `--port=${port}`], io, AbortSignal.abort())).toBe(2);
    expect(err.join('\n')).toContain(`--port must be an integer from 0 to 65535, not "${port}".`);
  });

  it('says loudly, on standard error, that the capture file does not exist, and still starts', async () => {
    const missing = join(dir, 'not-yet.jsonl');
    const { io, out, err } = memoryIO('', {});
    const stop = new AbortController();
    const done = inspectCommand([missing], io, stop.signal);
    await expect.poll(() => out.length).toBeGreaterThan(0);
    expect(err).toEqual([
      `payhook inspect: WARNING: ${missing} does not exist (yet). The page stays empty until something writes it: is the path right?`,
    ]);
    stop.abort();
    expect(await done).toBe(0);
  });

  it.each([
    [['--ledger-table', 't'], '--ledger-table and --ledger-prefix go with --ledger URL.'],
    [
      ['--ledger', 'mysql://127.0.0.1/shop'],
      '--ledger must be a redis://, rediss://, postgres:// or postgresql:// URL.',
    ],
    [
      ['--ledger', 'redis://127.0.0.1', '--ledger-table', 't'],
      '--ledger-table goes with a postgres:// ledger.',
    ],
    [
      ['--ledger', 'postgres://127.0.0.1/shop', '--ledger-prefix', 'p:'],
      '--ledger-prefix goes with a redis:// ledger.',
    ],
  ])('refuses the ledger options %j with exit 2: %s', async (argv, message) => {
    const { io, err } = memoryIO('', {});
    expect(await inspectCommand([capture, ...argv], io, AbortSignal.abort())).toBe(2);
    expect(err.join('\n')).toContain(message);
  });

  it.skipIf(!postgresUp)(
    "shows a payment's ledger entry read from PostgreSQL, with the URL from PAYHOOK_LEDGER_URL and --ledger-table",
    async () => {
      const table = `payhook_inspect_cli_ledger_${process.pid}`;
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      const paid = fakePurchase(
        { order_id: 'order-cli-ledger', amount: 20, currency: 'UAH' },
        { seed: 'cli-ledger' },
      );
      const file = join(dir, 'ledger.jsonl');
      await writeFile(
        file,
        `${JSON.stringify({ v: 3, at: 'x', status: 200, outcome: 'handled', notification: paid })}\n`,
      );
      try {
        await migrateLedger(pool, { table });
        await new PostgresLedgerStore({ pool, table }).append(paid.order_id, {
          k: 'k-1',
          m: 'purchase',
          s: 'success',
          d: 'p',
          a: 2000,
          c: 'UAH',
          at: 1,
        });
        const { io, out } = memoryIO('', { PAYHOOK_LEDGER_URL: DATABASE_URL });
        const stop = new AbortController();
        const done = inspectCommand([file, '--ledger-table', table], io, stop.signal);
        await expect.poll(() => out.length).toBeGreaterThan(0);
        const url = new URL(out[0]!.replace('payhook inspect: open ', ''));
        const token = url.searchParams.get('token')!;
        await expect
          .poll(
            async () =>
              (
                await (
                  await fetch(new URL('/deliveries', url), { headers: { 'x-payhook-token': token } })
                ).json()
              ).total,
          )
          .toBe(1);
        const shown = await (
          await fetch(new URL('/delivery?id=0', url), { headers: { 'x-payhook-token': token } })
        ).json();
        expect(shown.ledger).toEqual({
          entry: expect.objectContaining({
            orderId: 'order-cli-ledger',
            state: 'paid',
            paidAmount: 20,
            version: 1,
          }),
        });
        stop.abort();
        expect(await done).toBe(0);
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${table}`);
        await pool.end();
      }
    },
  );

  it.each([
    [
      [],
      'name a capture file, a running fake service with --fake-service URL, or a scenario run with --scenario RUN.',
    ],
    [['a', 'b'], 'name at most one capture file.'],
    [
      ['--fake-service', 'http://127.0.0.1:1'],
      '--fake-service needs --endpoints-key KEY (or PAYHOOK_ENDPOINTS_KEY), as payhook serve printed it.',
    ],
  ])('refuses %j with exit 2: %s', async (argv, message) => {
    const { io, err } = memoryIO('', {});
    expect(await inspectCommand(argv, io, AbortSignal.abort())).toBe(2);
    expect(err.join('\n')).toContain(message);
  });
});
