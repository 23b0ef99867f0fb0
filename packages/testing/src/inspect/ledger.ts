import { createPaymentLedger, type LedgerStore, type PaymentEntry } from '@payhook/payments';
import { maskDelivered } from './deliveries.js';

/**
 * The payment ledger the inspector reads (`@payhook/payments`' ledger): a store's URL, opened read-only, or a
 * ledger of your own (`createPaymentLedger(…)`, whose `get` only reads).
 *
 * @example
 * startInspector({ capture: 'deliveries.jsonl', ledger: { url: 'postgres://reader@db/shop', table: 'billing.payhook_ledger' } });
 */
export type InspectorLedger =
  | {
      /** `redis://`/`rediss://` (`RedisLedgerStore`) or `postgres://`/`postgresql://` (`PostgresLedgerStore`). */
      readonly url: string;
      /** `PostgresLedgerStore`'s table. @default 'payhook_ledger' */
      readonly table?: string;
      /** `RedisLedgerStore`'s key prefix. @default 'payhook:' */
      readonly prefix?: string;
    }
  | { get(orderId: string): Promise<PaymentEntry | undefined> };

/** What the page shows of a payment's ledger: its entry, nothing recorded, or why it could not be read. */
export type LedgerView =
  | { readonly entry: PaymentEntry }
  | { readonly missing: true }
  | { readonly error: string };

/** A ledger the inspector reads, and how to let go of its connection. */
export interface LedgerReader {
  get(orderId: string): Promise<PaymentEntry | undefined>;
  close(): Promise<void>;
}

/** A read that takes longer is shown as unreachable: a page must not wait on a ledger that went away. */
const READ_TIMEOUT_MS = 3_000;

/**
 * Opens the ledger read-only: on PostgreSQL a pool whose sessions are `default_transaction_read_only` (a write
 * would fail in the server), on Redis a client that only ever runs the store's `read` (`LRANGE`). The driver
 * (`pg`, `ioredis`) is an optional peer, loaded only here.
 */
export async function openLedger(ledger: InspectorLedger): Promise<LedgerReader> {
  if ('get' in ledger) return { get: (orderId) => ledger.get(orderId), close: async () => {} };
  const url = new URL(ledger.url);
  const opened = await openStore(url, ledger);
  const reader = createPaymentLedger({ store: opened.store, logger: false });
  return { get: (orderId) => reader.get(orderId), close: opened.close };
}

async function openStore(
  url: URL,
  options: { url: string; table?: string; prefix?: string },
): Promise<{ store: LedgerStore; close: () => Promise<void> }> {
  if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') {
    const pool = await readOnlyPool(options.url);
    const { PostgresLedgerStore } = await import('@payhook/payments/postgres');
    const store = new PostgresLedgerStore({ pool, ...(options.table ? { table: options.table } : {}) });
    return { store, close: () => pool.end() };
  }
  if (url.protocol === 'redis:' || url.protocol === 'rediss:') {
    const { Redis } = (await load('ioredis')) as typeof import('ioredis');
    const { RedisLedgerStore } = await import('@payhook/payments/redis');
    const client = new Redis(options.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    client.on('error', () => {});
    const store = new RedisLedgerStore({ client, ...(options.prefix ? { prefix: options.prefix } : {}) });
    return { store, close: async () => void client.disconnect() };
  }
  throw new TypeError(
    `[@payhook/testing] the ledger's URL must start with redis://, rediss://, postgres:// or postgresql://, not ${url.protocol}//.`,
  );
}

/**
 * A small `pg` pool whose every transaction is read-only (`default_transaction_read_only`): the inspector cannot
 * write the ledger, whatever it sends.
 */
export async function readOnlyPool(url: string): Promise<import('pg').Pool> {
  const { default: pg } = (await load('pg')) as typeof import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: 2,
    connectionTimeoutMillis: READ_TIMEOUT_MS,
    application_name: 'payhook inspect',
    options: '-c default_transaction_read_only=on',
  });
  pool.on('error', () => {});
  return pool;
}

async function load(driver: 'pg' | 'ioredis'): Promise<unknown> {
  try {
    return await import(driver);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(`[@payhook/testing] reading the ledger needs ${driver}: npm install ${driver}`);
  }
}

/**
 * A payment's ledger as the page shows it, masked as a delivery is (the ledger keeps no personal field, but an
 * order id may hold anything). Never waits longer than 3 s; a failure is named by its code or first line, never
 * with the ledger's URL (it may carry a password).
 */
export async function readLedger(reader: LedgerReader, orderId: string): Promise<LedgerView> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
  });
  try {
    const entry = await Promise.race([reader.get(orderId), timeout]);
    if (entry === undefined) return { missing: true };
    return { entry: maskDelivered(entry) as PaymentEntry };
  } catch (error) {
    return { error: reasonOf(error) };
  } finally {
    clearTimeout(timer);
  }
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message.split('\n', 1)[0]! : String(error);
  const text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '(the ledger URL)').slice(0, 300);
}
