import { access } from 'node:fs/promises';
import type { InspectorLedger } from '../inspect/ledger.js';
import { startInspector } from '../inspect/server.js';
import { algorithmFrom, httpUrlFrom, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { whenAborted } from './until-signal.js';

const INSPECT_HELP = `Usage: payhook inspect [FILE] [--fake-service URL] [--scenario RUN] [options]

Opens a page on 127.0.0.1 over a capture file (core's createCapture; followed every second, rotations included)
and/or the delivery attempts of a running 'payhook serve': newest first, searched by order, payment or operation
id, each delivery's request and answer, its payment's other deliveries and what its redeliveries changed, every
value masked as capture masks; with --ledger, the payment's ledger state and history beside it. From the page (or the keyboard: / j k Enter x Esc), replay deliveries re-signed
with the test secret (optionally edited first) to the --target app or to loopback, copy one as cURL, and save one
as a fixture. The printed address carries a random token: without it every request is refused. Stops on SIGINT
or SIGTERM.

Options:
  --fake-service URL    a running 'payhook serve' (its admin route needs --endpoints-key or PAYHOOK_ENDPOINTS_KEY)
  --scenario RUN        a run written by 'payhook scenario run … --report RUN': its timeline, failures first, at /scenario
  --endpoints-key KEY   the fake project's endpoints key
  --resign SECRET       the test secret replays are signed with (or PAYHOOK_SECRET); never the live one
  --algorithm A         sha256 (default) or sha1
  --target URL          your app's webhook URL: replays go to its origin or to loopback, nowhere else
  --fixtures DIR        where 'Save as fixture' writes, 0600 (nothing is written without it, nor anywhere else)
  --ledger URL          the payment ledger (@payhook/payments) to show each payment's state and history from, read
                        only: redis://… (RedisLedgerStore, needs ioredis) or postgres://… (PostgresLedgerStore,
                        needs pg; its sessions read-only). A URL with a password: prefer PAYHOOK_LEDGER_URL
  --ledger-table T      PostgresLedgerStore's table (default payhook_ledger)
  --ledger-prefix P     RedisLedgerStore's key prefix (default payhook:)
  --port N              0 to 65535; default: any free port
  -h, --help            this help

Example:
  PAYHOOK_SECRET=test-secret payhook inspect deliveries.jsonl --target http://127.0.0.1:3000/webhooks --fixtures test/fixtures
  payhook inspect deliveries.jsonl --ledger postgres://reader@127.0.0.1:5432/shop`;

/**
 * `payhook inspect`: prints the page's address (with its token), then serves the page over captured and live
 * deliveries until SIGINT or SIGTERM (or the signal given) aborts.
 *
 * @example
 * const stop = new AbortController();
 * const done = inspectCommand(['deliveries.jsonl'], io, stop.signal);
 */
export const inspectCommand = defineCommand({
  help: INSPECT_HELP,
  options: {
    text: 'fake-service endpoints-key resign algorithm target fixtures port scenario ledger ledger-table ledger-prefix',
  },
  positionals: true,
  longLived: true,
  run: async ({ values, positionals }, io, signal) => {
    if (positionals.length > 1) throw new UsageError('name at most one capture file.');
    const fake =
      values['fake-service'] === undefined
        ? undefined
        : httpUrlFrom('--fake-service', values['fake-service']);
    if (positionals.length === 0 && fake === undefined && values.scenario === undefined) {
      throw new UsageError(
        'name a capture file, a running fake service with --fake-service URL, or a scenario run with --scenario RUN.',
      );
    }
    const endpointsKey = values['endpoints-key'] ?? io.env.PAYHOOK_ENDPOINTS_KEY;
    if (fake !== undefined && !endpointsKey) {
      throw new UsageError(
        '--fake-service needs --endpoints-key KEY (or PAYHOOK_ENDPOINTS_KEY), as payhook serve printed it.',
      );
    }
    const secret = values.resign ?? io.env.PAYHOOK_SECRET;
    const ledger = ledgerFrom(values, io.env.PAYHOOK_LEDGER_URL);
    const inspector = await startInspector({
      ...(positionals[0] === undefined ? {} : { capture: positionals[0] }),
      ...(fake === undefined
        ? {}
        : { fakeService: { url: fake.href, endpointsKey: endpointsKey as string } }),
      ...(secret ? { secret } : {}),
      algorithm: algorithmFrom(values.algorithm),
      ...(values.target === undefined ? {} : { target: httpUrlFrom('--target', values.target).href }),
      ...(values.fixtures === undefined ? {} : { fixtures: values.fixtures }),
      ...(values.scenario === undefined ? {} : { scenario: values.scenario }),
      port: portFrom(values.port),
      ...(ledger === undefined ? {} : { ledger }),
    });
    io.stdout(`payhook inspect: open ${inspector.url}`);
    if (values.scenario !== undefined) {
      io.stdout(
        `payhook inspect: the scenario run: ${inspector.url.replace('/?token=', '/scenario?token=')}`,
      );
    }
    const capture = positionals[0];
    if (
      capture !== undefined &&
      !(await access(capture).then(
        () => true,
        () => false,
      ))
    ) {
      io.stderr(
        `payhook inspect: WARNING: ${capture} does not exist (yet). The page stays empty until something writes it: is the path right?`,
      );
    }
    if (!secret) io.stdout('replay is off: pass --resign SECRET (the test secret) or set PAYHOOK_SECRET.');
    await whenAborted(signal);
    await inspector.close();
    return 0;
  },
});

/** `--ledger URL` (or PAYHOOK_LEDGER_URL) with its store's table or prefix; `undefined` without one. */
function ledgerFrom(
  values: { ledger?: string; 'ledger-table'?: string; 'ledger-prefix'?: string },
  fromEnv: string | undefined,
): InspectorLedger | undefined {
  const url = values.ledger ?? (fromEnv || undefined);
  const table = values['ledger-table'];
  const prefix = values['ledger-prefix'];
  if (url === undefined) {
    if (table !== undefined || prefix !== undefined) {
      throw new UsageError('--ledger-table and --ledger-prefix go with --ledger URL.');
    }
    return undefined;
  }
  const protocol = URL.canParse(url) ? new URL(url).protocol : '';
  const redis = protocol === 'redis:' || protocol === 'rediss:';
  if (!redis && protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new UsageError('--ledger must be a redis://, rediss://, postgres:// or postgresql:// URL.');
  }
  if (redis && table !== undefined) throw new UsageError('--ledger-table goes with a postgres:// ledger.');
  if (!redis && prefix !== undefined) throw new UsageError('--ledger-prefix goes with a redis:// ledger.');
  return { url, ...(table === undefined ? {} : { table }), ...(prefix === undefined ? {} : { prefix }) };
}

/** A TCP port: 0 (any free one) to 65535. The CLI's `positiveInteger` stops at 10000, a count's bound, not a port's. */
function portFrom(value: string | undefined): number {
  if (value === undefined) return 0;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port <= 65_535)) {
    throw new UsageError(`--port must be an integer from 0 to 65535, not ${JSON.stringify(value)}.`);
  }
  return port;
}
