import type { DeliveryAttempt } from '../fake/outbox.js';
import type {
  Expectations,
  HttpExpectation,
  LedgerExpectation,
  ScenarioFailure,
  WebhookExpectation,
} from './types.js';

/** What the runner knows of a payment the scenario created. */
export interface NamedPayment {
  readonly orderId: string;
  readonly paymentId: string;
  readonly method: string;
  readonly subscriptionId?: string;
}

/** What checking an expectation needs: the attempts in its window, the payments, the app. */
export interface CheckContext {
  readonly attempts: readonly DeliveryAttempt[];
  readonly payments: ReadonlyMap<string, NamedPayment>;
  readonly target: string;
  readonly fetch: typeof globalThis.fetch;
  readonly ledger: { get(orderId: string): Promise<object | undefined> } | undefined;
  /** Webhooks an expectation found never acknowledged: the run's own check at the end does not name them again. */
  readonly unacknowledged: Set<number>;
}

/** `method status` of a notification: `purchase success`, `refund success`. */
export function eventOf(notification: Readonly<Record<string, unknown>>): string {
  return `${String(notification.method)} ${String(notification.status)}`;
}

/** payhook's `outcome` of an answer, or its error `code`, or nothing. */
export function outcomeOf(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { outcome?: unknown; error?: { code?: unknown } } | null;
    if (typeof parsed?.outcome === 'string') return parsed.outcome;
    if (typeof parsed?.error?.code === 'string') return parsed.error.code;
  } catch {
    // Not payhook's JSON: no outcome.
  }
  return undefined;
}

/** `handled` is also met by `queued`: a queue took the notification to handle it. */
function sameOutcome(expected: string, got: string | undefined): boolean {
  return got === expected || (expected === 'handled' && got === 'queued');
}

function checkWebhook(expected: WebhookExpectation, context: CheckContext): string[] {
  const named = expected.payment === undefined ? undefined : context.payments.get(expected.payment);
  const label = `${expected.event}${expected.payment ? ` of ${expected.payment}` : ''}`;
  const groups = new Map<number, DeliveryAttempt[]>();
  for (const attempt of context.attempts) {
    if (eventOf(attempt.notification) !== expected.event) continue;
    if (named && attempt.notification.order_id !== named.orderId) continue;
    const group = groups.get(attempt.webhookId) ?? [];
    group.push(attempt);
    groups.set(attempt.webhookId, group);
  }
  if (groups.size === 0) return [`expected a ${label} webhook, none was delivered`];
  const problems: string[] = [];
  if (expected.count !== undefined && groups.size !== expected.count) {
    problems.push(`expected ${expected.count} ${label} webhook(s), ${groups.size} were delivered`);
  }
  for (const [id, attempts] of groups) {
    const acknowledged = attempts.filter((attempt) => attempt.ok);
    const first = acknowledged[0];
    if (first === undefined) {
      const last = attempts.at(-1)!;
      const said = last.error ?? `${last.status} ${outcomeOf(last.body) ?? ''}`.trim();
      if (expected.status !== undefined && last.status === expected.status) continue;
      context.unacknowledged.add(id);
      problems.push(`${label} (webhook #${id}) was never acknowledged: its last attempt got ${said}`);
      continue;
    }
    const outcome = outcomeOf(first.body);
    if (expected.status !== undefined && first.status !== expected.status) {
      problems.push(`${label} (webhook #${id}) answered ${first.status}, expected ${expected.status}`);
    }
    if (expected.outcome !== undefined && !sameOutcome(expected.outcome, outcome)) {
      problems.push(
        `${label} (webhook #${id}) answered ${outcome ?? 'no outcome'}, expected ${expected.outcome}`,
      );
    }
    if (expected.copies !== undefined) {
      for (const copy of acknowledged.slice(1)) {
        const got = outcomeOf(copy.body);
        if (!sameOutcome(expected.copies, got)) {
          problems.push(
            `a copy of ${label} (webhook #${id}, attempt ${copy.attempt}) answered ${got ?? 'no outcome'}, expected ${expected.copies}`,
          );
        }
      }
    }
  }
  return problems;
}

async function checkLedger(expected: LedgerExpectation, context: CheckContext): Promise<string[]> {
  if (!context.ledger) return [];
  const named = context.payments.get(expected.payment);
  if (!named) return [`no payment named ${expected.payment}`];
  const entry = (await context.ledger.get(named.orderId)) as Record<string, unknown> | undefined;
  if (!entry) return [`the ledger has no entry for ${expected.payment} (order ${named.orderId})`];
  const problems: string[] = [];
  for (const [field, value] of Object.entries(expected)) {
    if (field === 'payment') continue;
    if (!sameValue(entry[field], value)) {
      problems.push(
        `the ledger's ${field} of ${expected.payment} is ${JSON.stringify(entry[field])}, expected ${JSON.stringify(value)}`,
      );
    }
  }
  return problems;
}

/** `{order}` → its order_id, `{order.payment_id}` → its payment id. */
function fillPath(path: string, payments: ReadonlyMap<string, NamedPayment>): string {
  return path.replace(
    /\{([A-Za-z0-9_-]+)(?:\.(order_id|payment_id))?\}/g,
    (whole, name: string, field?: string) => {
      const named = payments.get(name);
      if (!named) return whole;
      return encodeURIComponent(field === 'payment_id' ? named.paymentId : named.orderId);
    },
  );
}

/** The value at a JSON path of `a.b[0].c` form (a leading `$.` allowed). */
function valueAt(document: unknown, path: string): unknown {
  const parts = path
    .replace(/^\$\.?/, '')
    .split(/\.|\[(\d+)\]/)
    .filter((part) => part !== undefined && part !== '');
  let current: unknown = document;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function sameValue(got: unknown, expected: unknown): boolean {
  return JSON.stringify(got) === JSON.stringify(expected);
}

async function checkHttp(expected: HttpExpectation, context: CheckContext): Promise<string[]> {
  const url = new URL(fillPath(expected.get, context.payments), new URL(context.target).origin).href;
  let document: unknown;
  try {
    const response = await context.fetch(url, { headers: { accept: 'application/json' } });
    const body = await response.text();
    if (!response.ok) return [`GET ${expected.get} answered ${response.status}`];
    document = JSON.parse(body);
  } catch (error) {
    return [`GET ${expected.get} failed: ${error instanceof Error ? error.message : String(error)}`];
  }
  const got = valueAt(document, expected.json);
  return sameValue(got, expected.equals)
    ? []
    : [
        `GET ${expected.get}: ${expected.json} is ${JSON.stringify(got)}, expected ${JSON.stringify(expected.equals)}`,
      ];
}

/** Every expectation of `expectations` checked, each unmet one a failure at `step`. */
export async function checkExpectations(
  expectations: Expectations | undefined,
  context: CheckContext,
  step: number | undefined,
): Promise<ScenarioFailure[]> {
  if (!expectations) return [];
  const failures: ScenarioFailure[] = [];
  const add = (kind: ScenarioFailure['kind'], messages: string[]) => {
    for (const message of messages) failures.push({ ...(step === undefined ? {} : { step }), kind, message });
  };
  for (const expected of expectations.webhooks ?? []) add('webhook', checkWebhook(expected, context));
  for (const expected of expectations.ledger ?? []) add('ledger', await checkLedger(expected, context));
  for (const expected of expectations.http ?? []) add('http', await checkHttp(expected, context));
  return failures;
}
