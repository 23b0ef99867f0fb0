import { randomUUID } from 'node:crypto';
import {
  createWebhookHandler,
  type DedupeStore,
  MemoryStore,
  type TransactionalStore,
  type WebhookHandler,
} from '@payhook/core';
import { migrate, PostgresInbox, PostgresStore } from '@payhook/core/postgres';
import { RedisStore } from '@payhook/core/redis';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { formBody, post, purchase, refund } from '../../core/test/fixtures.js';
import {
  clusterNodes,
  DATABASE_URL,
  REDIS_URL,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from '../../core/test/servers.js';
import type { LedgerStore } from '../src/ledger/contract.js';
import type { Transition } from '../src/ledger/entry.js';
import { createPaymentLedger, type PaymentLedger, type PaymentLedgerOptions } from '../src/ledger/ledger.js';
import { MemoryLedgerStore } from '../src/ledger/memory.js';
import { migrateLedger, PostgresLedgerStore } from '../src/ledger/postgres.js';
import { RedisLedgerStore } from '../src/ledger/redis.js';

export { SECRET } from '../../core/test/fixtures.js';

// The ledger's tests' webhooks (one payment's, by order id) and the stores they run on, each case a claim store with
// the ledger's store beside it; PostgresInbox records the ledger in the claim's transaction.

export type Webhook = Record<string, unknown>;

/** A 3-D Secure purchase of 100 with two partial refunds (30 and 20): pending, success, refund, refund. */
export function securePurchase(orderId: string): Webhook[] {
  const base = { order_id: orderId, payment_id: `pay-${orderId}`, amount: 100, currency: 'UAH' };
  return [
    purchase({ ...base, status: 'pending', status_code: '2122', user_action_required: true }),
    purchase({ ...base }),
    refund({ ...base, operation_id: `${orderId}-r1`, amount: 30 }),
    refund({ ...base, operation_id: `${orderId}-r2`, amount: 20, created_at: '2026-11-24T09:00:00' }),
  ];
}

/** An auth of 100, captured whole, then refunded 40. */
export function authCaptureRefund(orderId: string): Webhook[] {
  const base = { order_id: orderId, payment_id: `pay-${orderId}`, amount: 100, currency: 'UAH' };
  return [
    purchase({ ...base, method: 'auth', status_code: '1002' }),
    refund({ ...base, method: 'capture', operation_id: `${orderId}-c1` }),
    refund({ ...base, operation_id: `${orderId}-r1`, amount: 40 }),
  ];
}

/** An auth of 100, then voided. */
export function authVoid(orderId: string): Webhook[] {
  const base = { order_id: orderId, payment_id: `pay-${orderId}`, amount: 100, currency: 'UAH' };
  return [
    purchase({ ...base, method: 'auth', status_code: '1002' }),
    refund({ ...base, method: 'void', operation_id: `${orderId}-v1` }),
  ];
}

/**
 * A subscription's three charges (each its own transaction_id) and the second one failing: the first payment
 * (`init`), a failed scheduled charge and a successful retry (`active`), each charge pending first.
 */
export function subscription(orderId: string): Webhook[] {
  const base = { order_id: orderId, payment_id: `pay-${orderId}`, amount: 25, currency: 'UAH' };
  const charge = (n: number, status: string, recurring: string, code: string) =>
    purchase({
      ...base,
      transaction_id: `${orderId}-t${n}`,
      status,
      status_code: code,
      recurring: { id: `sub-${orderId}`, status: recurring },
      created_at: `2026-11-2${n}T10:00:00`,
    });
  return [
    charge(1, 'pending', 'init', '2122'),
    charge(1, 'success', 'init', '1000'),
    charge(2, 'failure', 'active', '2001'),
    charge(3, 'success', 'active', '1000'),
  ];
}

/** Every order of `items`. */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

/** A claim store and a ledger store for one test: built fresh per instance (a restart, another worker). */
export interface LedgerCase {
  readonly name: string;
  readonly up: boolean;
  readonly shared: boolean;
  claims(): DedupeStore | TransactionalStore;
  ledgerStore(): LedgerStore;
}

export async function ledgerCases(name: string) {
  const redisUp = await reachRedis();
  const clusterUp = await reachRedisCluster();
  const postgresUp = await reachPostgres();
  const suffix = `${name}_${process.pid}`;
  const inbox = `payhook_ledger_inbox_${suffix}`;
  const ledgerTable = `payhook_ledger_${suffix}`;
  const prefix = `payhook-test:ledger:${suffix}:`;
  let redis: Redis | undefined;
  let cluster: Cluster | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    if (redisUp) redis = new Redis(REDIS_URL);
    if (clusterUp) {
      cluster = new Cluster(clusterNodes());
      await new Promise((resolve) => cluster!.once('ready', resolve));
    }
    if (postgresUp) {
      pool = new pg.Pool({ connectionString: DATABASE_URL, max: 12 });
      await pool.query(`DROP TABLE IF EXISTS ${inbox}, ${ledgerTable}`);
      await migrate(pool, { table: inbox });
      await migrateLedger(pool, { table: ledgerTable });
    }
  });
  afterAll(async () => {
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    if (cluster) {
      for (const node of cluster.nodes('master')) {
        for (const key of await node.keys(`${prefix}*`)) await node.del(key);
      }
      cluster.disconnect();
    }
    await pool?.query(`DROP TABLE IF EXISTS ${inbox}, ${ledgerTable}`);
    await pool?.end();
  });
  const memory = { claims: new MemoryStore(), ledger: new MemoryLedgerStore() };
  const cases: LedgerCase[] = [
    {
      name: 'memory',
      up: true,
      shared: false,
      claims: () => memory.claims,
      ledgerStore: () => memory.ledger,
    },
    {
      name: 'Redis',
      up: redisUp,
      shared: true,
      claims: () => new RedisStore({ client: redis!, prefix }),
      ledgerStore: () => new RedisLedgerStore({ client: redis!, prefix }),
    },
    {
      // Each payment's two ledger keys share its `{order_id}` tag; the claims spread over the masters.
      name: 'Redis Cluster',
      up: clusterUp,
      shared: true,
      claims: () => new RedisStore({ client: cluster!, prefix }),
      ledgerStore: () => new RedisLedgerStore({ client: cluster!, prefix }),
    },
    {
      name: 'PostgreSQL',
      up: postgresUp,
      shared: true,
      claims: () => new PostgresStore({ pool: pool!, table: inbox }),
      ledgerStore: () => new PostgresLedgerStore({ pool: pool!, table: ledgerTable }),
    },
    {
      name: 'PostgreSQL inbox (in the claim transaction)',
      up: postgresUp,
      shared: true,
      claims: () => new PostgresInbox({ pool: pool!, table: inbox }),
      ledgerStore: () => new PostgresLedgerStore({ pool: pool!, table: ledgerTable }),
    },
  ];
  return { cases, pool: () => pool!, redis: () => redis! };
}

/** One instance of a merchant's app: a webhook with its ledger, and every transition it fired. */
export interface Instance {
  readonly webhook: WebhookHandler;
  readonly ledger: PaymentLedger;
  readonly fired: Transition[];
  readonly handled: string[];
  deliver(webhook: Webhook): Promise<string>;
}

export function instance(
  storeCase: LedgerCase,
  secret: string,
  options: PaymentLedgerOptions = {},
  fired: Transition[] = [],
): Instance {
  const ledger = createPaymentLedger({ store: storeCase.ledgerStore(), ...options });
  ledger.onTransition((t) => void fired.push(t));
  const handled: string[] = [];
  const webhook = createWebhookHandler({
    secret,
    logger: false,
    store: storeCase.claims(),
    ledger,
    handle: (n) => void handled.push(`${n.method}.${n.status}`),
  });
  return {
    webhook,
    ledger,
    fired,
    handled,
    async deliver(notification) {
      const answer = await webhook(post(formBody(notification, secret)), undefined);
      if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${answer.body}`);
      return answer.outcome;
    },
  };
}

export const uniqueOrder = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** `items` with some delivered twice (a seeded choice), the copy right after or at the end. */
export function withDuplicates<T>(items: readonly T[], seed: number): T[] {
  const out: T[] = [];
  items.forEach((item, i) => {
    out.push(item);
    if ((seed >> i) & 1) out.push(item);
  });
  if (items.length > 0) out.push(items[seed % items.length]!);
  return out;
}

/**
 * What a run's transitions must hold: each step fired once (a payment's target state once, a charge's once, each
 * refund once), none backwards, each from where the previous one ended.
 */
export function checkTransitions(fired: readonly Transition[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const last = new Map<string, string>();
  const RANK: Record<string, number> = {
    new: 0,
    pending: 1,
    init: 1,
    authorized: 2,
    active: 2,
    paid: 3,
    failed: 3,
    voided: 3,
    canceled: 3,
    partially_refunded: 4,
    refunded: 5,
  };
  for (const t of fired) {
    const subject = `${t.orderId}/${t.subject}/${t.chargeId ?? ''}`;
    const id = `${subject}->${t.to}${t.refund ? `/${t.refund.operationId}` : ''}`;
    if (seen.has(id)) problems.push(`fired twice: ${id}`);
    seen.add(id);
    const before = last.get(subject) ?? 'new';
    if (t.from !== before) problems.push(`${id} from ${t.from}, but the last step ended at ${before}`);
    if (RANK[t.to]! < RANK[t.from]!) problems.push(`backwards: ${id} from ${t.from}`);
    last.set(subject, t.to);
  }
  return problems;
}
