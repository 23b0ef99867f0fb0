import type { WebhookHandler, WebhookOutcome } from '@payhook/core';
import { parseNotification, parseTimestamp } from '@payhook/core';
import { isMissing } from '@payhook/core/adapter';
import { optionalFunction, optionError, positive } from '../option-checks.js';
import {
  type ApiClientOptions,
  createApiClient,
  type ResendAnswer,
  type ResendClient,
} from './api-client.js';
import { ApiError } from './api-errors.js';

/**
 * An order still waiting for its webhook, as the merchant's database lists it.
 *
 * @example
 * const order: PendingOrder = { orderId: 'order-1', operation: 'purchase', createdAt: row.created_at };
 */
export interface PendingOrder {
  /** The merchant's `order_id`. */
  orderId: string;
  /** @default 'purchase' */
  operation?: string;
  /** One charge of a recurring payment (4.4). */
  transactionId?: string;
  /** When the order was created: a `Date`, epoch ms, or a timestamp (zoneless ones read as UTC). */
  createdAt?: Date | number | string;
}

/**
 * What a run did with one order:
 * `applied` — the service answered the record and the handlers took it (`outcome` says how);
 * `requested` — the service was asked to re-send and its webhook is on the way (no record, or no `webhook`);
 * `pending` — the service says the payment itself is still pending (`init`, `pending`, `processing`);
 * `failed` — `error` says why; the order stays for a later run;
 * `given_up` — older than `giveUpAfterMs`: reported, not requested.
 *
 * @example
 * const failed = report.results.filter((r) => r.status === ('failed' satisfies ReconcileStatus));
 */
export type ReconcileStatus = 'applied' | 'requested' | 'pending' | 'failed' | 'given_up';

/**
 * One order's line of a run's report.
 *
 * @example
 * for (const r of report.results) log(`${r.order.orderId} ${r.status} ${r.reason ?? ''}`);
 */
export interface ReconcileResult {
  readonly order: PendingOrder;
  readonly status: ReconcileStatus;
  /** The payment's status in the record the service answered. */
  readonly paymentStatus?: string;
  /** How `webhook.process` took the record (`queued`, `handled+queued` where the webhook has a queue). */
  readonly outcome?: Exclude<WebhookOutcome, 'refused'>;
  /** Why it failed: an `ApiError`, the `WebhookError` of `process`, or a `PayloadError` for a record it refused. */
  readonly error?: Error;
  /** One line for logs (never a key or a record). */
  readonly reason?: string;
}

/**
 * A run's report: every order's result in the order listed, and how many ended in each status.
 *
 * @example
 * if (report.counts.failed > 0) alert(report.results.filter((r) => r.status === 'failed'));
 */
export interface ReconcileReport {
  readonly results: readonly ReconcileResult[];
  readonly counts: Readonly<Record<ReconcileStatus, number>>;
}

/**
 * Options of `createReconciler`.
 *
 * @example
 * createReconciler({ webhook, api: { baseUrl, posId, apiKey, endpointsKey, apiSecret }, listPending });
 */
export interface ReconcilerOptions<C = undefined> {
  /**
   * The webhook handler whose handlers take a record the service answers (`webhook.process`: the same key and
   * exactly-once protocol as a delivery; with the webhook's `queue`, its inline handlers run here and the rest is
   * queued for a worker, as for a delivery). Without it, the service is only asked to re-send.
   */
  webhook?: Pick<WebhookHandler<C>, 'process'>;
  /** The context `process` passes to the handlers. */
  context?: C;
  /** The service's API: its settings, or a client from `createApiClient` (only `resend` is used). */
  api: ApiClientOptions | ResendClient;
  /** The orders still waiting for their webhook, older than the merchant's threshold. */
  listPending: () =>
    | Iterable<PendingOrder>
    | AsyncIterable<PendingOrder>
    | Promise<Iterable<PendingOrder> | AsyncIterable<PendingOrder>>;
  /**
   * Orders older than this are reported `given_up` and not requested. Keep it below the store's `ttlMs`: a record
   * applied after its key expired would run its handlers again.
   * @default 604_800_000 (7 days, the default ttlMs)
   */
  giveUpAfterMs?: number;
  /**
   * How many re-sends are under way at once.
   * @default 4
   */
  concurrency?: number;
  /**
   * How many re-sends start per second (the service's rate limits are not shown).
   * @default 5
   */
  requestsPerSecond?: number;
  /** Called with each order's result as it is known, for a log line per order. */
  onResult?: (result: ReconcileResult) => void;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Runs reconciliation: each `run()` lists the orders waiting, asks the service to re-send each one.
 *
 * @example
 * const report = await reconciler.run();
 */
export interface Reconciler {
  /** One pass over `listPending()`; never rejects for one order's failure. A run asked for while one is under way joins it. */
  run(): Promise<ReconcileReport>;
}

const STATUSES: readonly ReconcileStatus[] = ['applied', 'requested', 'pending', 'failed', 'given_up'];
const UNFINISHED = new Set(['init', 'pending', 'processing']);

/**
 * Creates a reconciler for orders whose webhook never came. Each order is re-sent through the service's API
 * (spec 4.3; 4.4 with `transactionId`); a payment record in the answer goes straight to `webhook.process`, so
 * the re-sent webhook arriving later, or the original arriving late, is a duplicate and no handler runs twice.
 *
 * @example
 * const reconciler = createReconciler({
 *   webhook,
 *   api: { baseUrl, posId, apiKey, endpointsKey, apiSecret: process.env.PAYMENT_API_SECRET! },
 *   listPending: () => db.ordersAwaitingPayment({ olderThanMinutes: 15 }),
 * });
 * setInterval(() => void reconciler.run().then(logReport), 10 * 60_000);
 */
export function createReconciler<C = undefined>(options: ReconcilerOptions<C>): Reconciler {
  const settings = checkedSettings(options);
  const listPending = options.listPending;
  const now = optionalFunction('now', options.now) ?? Date.now;
  let running: Promise<ReconcileReport> | undefined;

  async function runOnce(): Promise<ReconcileReport> {
    const orders: PendingOrder[] = [];
    for await (const order of await listPending()) orders.push(order);
    return runAll(settings, orders, now());
  }

  return {
    run() {
      running ??= runOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
  };
}

interface Settings<C> {
  readonly client: ResendClient;
  readonly webhook: Pick<WebhookHandler<C>, 'process'> | undefined;
  readonly context: C | undefined;
  readonly giveUpAfterMs: number;
  readonly concurrency: number;
  readonly perSecond: number;
  readonly onResult: ((result: ReconcileResult) => void) | undefined;
}

function checkedSettings<C>(options: ReconcilerOptions<C>): Settings<C> {
  if (typeof options.api !== 'object' || options.api === null) {
    throw optionError('api', 'the API client options or a client from createApiClient', options.api);
  }
  const webhook = options.webhook;
  if (webhook !== undefined && typeof (webhook as { process?: unknown } | null)?.process !== 'function') {
    throw optionError('webhook', 'a webhook handler (with process)', webhook);
  }
  if (typeof options.listPending !== 'function') {
    throw optionError('listPending', 'a function', options.listPending);
  }
  return {
    client: isClient(options.api) ? options.api : createApiClient(options.api),
    webhook,
    context: options.context,
    giveUpAfterMs: positive('giveUpAfterMs', options.giveUpAfterMs, 7 * 24 * 60 * 60 * 1000),
    concurrency: Math.max(1, Math.floor(positive('concurrency', options.concurrency, 4))),
    perSecond: positive('requestsPerSecond', options.requestsPerSecond, 5),
    onResult: optionalFunction('onResult', options.onResult),
  };
}

/** Every order through `concurrency` workers, paced; results in the order listed. */
async function runAll<C>(
  settings: Settings<C>,
  orders: PendingOrder[],
  startedAt: number,
): Promise<ReconcileReport> {
  const pace = createPacer(settings.perSecond);
  const results: ReconcileResult[] = new Array(orders.length);
  let next = 0;
  const worker = async () => {
    while (next < orders.length) {
      const index = next++;
      const result = await reconcile(settings, orders[index]!, startedAt, pace);
      results[index] = result;
      try {
        settings.onResult?.(result);
      } catch {
        // A failing log line must not stop the run.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, orders.length) }, worker));
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ReconcileStatus, number>;
  for (const result of results) counts[result.status]++;
  return { results, counts };
}

/** One order: given up, or asked for and its answer applied; never throws. */
async function reconcile<C>(
  settings: Settings<C>,
  order: PendingOrder,
  startedAt: number,
  pace: () => Promise<void>,
): Promise<ReconcileResult> {
  const created = createdAtOf(order.createdAt);
  if (created === 'invalid') return { order, status: 'failed', reason: 'createdAt is not a date.' };
  if (created !== undefined && startedAt - created > settings.giveUpAfterMs) {
    const days = Math.floor((startedAt - created) / 86_400_000);
    return { order, status: 'given_up', reason: `created ${days} day(s) ago: past giveUpAfterMs.` };
  }
  try {
    await pace();
    return await apply(settings, order, await settings.client.resend(order));
  } catch (error) {
    const err = error instanceof Error ? error : new Error(String(error));
    return { order, status: 'failed', error: err, reason: err.message };
  }
}

/** The service's answer: no record (requested), or the record of the question asked handed to `process`. */
async function apply<C>(
  settings: Settings<C>,
  order: PendingOrder,
  answer: ResendAnswer,
): Promise<ReconcileResult> {
  const record = answer.record;
  if (record === undefined || !('order_id' in record)) return { order, status: 'requested' };
  const mismatch = mismatchOf(settings.client.posId, order, record);
  if (mismatch) throw new ApiError('api.answer_mismatch', `${mismatch}: not applied.`);
  if (order.transactionId !== undefined && isMissing(record.transaction_id)) {
    const reason =
      'the record answered names no transaction_id: not applied; the re-sent webhook carries it.';
    return { order, status: 'requested', reason };
  }
  const notification = parseNotification(record);
  const paymentStatus = String(notification.status);
  const unfinished = UNFINISHED.has(paymentStatus);
  // `init`: the customer has not acted yet, and the service sends no webhook for it (3.1 shows none).
  if (paymentStatus === 'init') return { order, status: 'pending', paymentStatus };
  if (!settings.webhook) return { order, status: unfinished ? 'pending' : 'requested', paymentStatus };
  // As a delivery is taken: where the webhook has a queue, its queued handlers run in a worker, not here.
  const outcome = await settings.webhook.process(notification, settings.context, { enqueue: true });
  return { order, status: unfinished ? 'pending' : 'applied', paymentStatus, outcome };
}

/**
 * Why a record does not answer the question asked, or `undefined`. The operation asked is the merchant's (an
 * `auth` payment is asked as `auth`), so the record's method must be it; without `transactionId` 4.4 answers the
 * latest charge, any one. Only what was asked is named: the record's values are the service's.
 */
function mismatchOf(
  posId: string | undefined,
  order: PendingOrder,
  record: Readonly<Record<string, unknown>>,
): string | undefined {
  const { orderId, transactionId } = order;
  const operation = order.operation ?? 'purchase';
  if (String(record.order_id) !== orderId) {
    return `the service answered the record of another order than ${orderId}`;
  }
  if (posId !== undefined && !isMissing(record.pos_id) && !sameId(record.pos_id, posId)) {
    return `the service answered, for order ${orderId}, a record of another project than the client's posId`;
  }
  const transaction = record.transaction_id;
  if (transactionId !== undefined && !isMissing(transaction) && String(transaction) !== transactionId) {
    return `the service answered, for order ${orderId}, a record of another transaction than ${transactionId}`;
  }
  if (!isMissing(record.method) && String(record.method).toLowerCase() !== operation.toLowerCase()) {
    return `the service answered, for order ${orderId}, a record of another operation than the ${operation} asked`;
  }
  return undefined;
}

/** UUIDs (pos_id) compare without regard to case. */
function sameId(value: unknown, id: string): boolean {
  return String(value).toLowerCase() === id.toLowerCase();
}

/** Start slots `1000 / perSecond` ms apart: the first at once, each next one after the previous slot. */
function createPacer(perSecond: number): () => Promise<void> {
  const gapMs = 1000 / perSecond;
  let nextAt = 0;
  return () => {
    const at = Math.max(Date.now(), nextAt);
    nextAt = at + gapMs;
    const wait = at - Date.now();
    return wait <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, wait));
  };
}

function createdAtOf(value: PendingOrder['createdAt']): number | undefined | 'invalid' {
  if (value === undefined) return undefined;
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : parseTimestamp(String(value))?.getTime();
  return ms === undefined || !Number.isFinite(ms) ? 'invalid' : ms;
}

function isClient(api: ApiClientOptions | ResendClient): api is ResendClient {
  return typeof (api as ResendClient).resend === 'function';
}
