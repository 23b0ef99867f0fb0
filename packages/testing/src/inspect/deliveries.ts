import { notificationKey, parseNotification } from '@payhook/core';
import { createMasker, DEFAULT_MASKED_FIELDS } from '@payhook/core/capture';

/**
 * What capture masks (card data, the card token, customer details, the receipt and 3DS links, Luhn numbers
 * anywhere), applied to everything the page is given: a fake service's live attempts are not masked at the source,
 * and a capture may have been written with a shorter `mask` list.
 */
export const maskDelivered: (value: unknown) => unknown = createMasker(DEFAULT_MASKED_FIELDS);

/**
 * One delivery as the inspector shows it, read from a capture line (`createCapture`) or from a fake service's
 * delivery attempt. Every text in it is untrusted: the page renders it as text, never as HTML.
 */
export interface InspectedDelivery {
  /** Position in the inspector's list, stable while it runs. */
  readonly id: number;
  readonly source: 'capture' | 'fake';
  /** 1-based line of the capture file. */
  readonly line?: number;
  /** When the answer was given (capture) or the attempt made (fake), ISO 8601. */
  readonly at: string;
  /** `<method>.<status>` of the notification (`purchase.success`), `?` when there is none. */
  readonly event: string;
  readonly order?: string;
  /** The notification's `payment_id`: a payment's deliveries (its refunds too) share it. */
  readonly payment?: string;
  /** A secondary operation's `operation_id` (capture, void, refund). */
  readonly operation?: string;
  /** The amount with its currency, as sent (`12.5 UAH`). */
  readonly amount?: string;
  /** The HTTP status of the answer; absent when the request failed. */
  readonly status?: number;
  readonly outcome?: string;
  /** The refusal's code (`signature.invalid`). */
  readonly code?: string;
  /** What most likely caused a refused signature (`sha1`), when the capture says. */
  readonly hint?: string;
  readonly durationMs?: number;
  /** The notification key: every delivery of one notification shares it. */
  readonly key?: string;
  readonly contentType?: string;
  /** The decoded notification, masked as captured; absent for a delivery refused before verification. */
  readonly notification?: Readonly<Record<string, unknown>>;
  /** Why a fake's attempt got no answer. */
  readonly error?: string;
  /** The URL a fake's attempt was posted to. */
  readonly url?: string;
  /** A fake's attempt number: 1, then 2, 3… for the service's retries. */
  readonly attempt?: number;
  /** The answer's body (a fake's attempt; a capture keeps none), masked as a notification is. */
  readonly answer?: string;
  /** The answer's headers (a fake's attempt, when its transport read them; a capture of format 3), masked as a notification is. */
  readonly answerHeaders?: Readonly<Record<string, string>>;
  /** The refusal's message, from payhook's JSON answer: what the handler said went wrong. */
  readonly message?: string;
}

/** A capture line the inspector could not read: its number and why, never its content. */
export interface UnreadableLine {
  readonly line: number;
  readonly reason: string;
}

type Fields = Omit<
  InspectedDelivery,
  'id' | 'source' | 'event' | 'order' | 'payment' | 'operation' | 'amount' | 'key'
> & {
  key?: string;
};

function text(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

function keyOf(notification: Readonly<Record<string, unknown>>): string | undefined {
  try {
    return notificationKey(parseNotification(notification));
  } catch {
    return undefined;
  }
}

/** The columns every source shares, worked out from the notification. */
function describeDelivery(
  id: number,
  source: InspectedDelivery['source'],
  fields: Fields,
): InspectedDelivery {
  const n =
    fields.notification === undefined
      ? undefined
      : (maskDelivered(fields.notification) as Fields['notification']);
  const method = text(n?.method);
  const status = text(n?.status);
  const amount = text(n?.amount);
  const currency = text(n?.currency);
  const key = fields.key ?? (n ? keyOf(n) : undefined);
  return {
    ...fields,
    ...(n === undefined ? {} : { notification: n }),
    id,
    source,
    event: method || status ? `${method ?? '?'}.${status ?? '?'}` : '?',
    ...(text(n?.order_id) === undefined ? {} : { order: text(n?.order_id) }),
    ...(text(n?.payment_id) === undefined ? {} : { payment: text(n?.payment_id) }),
    ...(text(n?.operation_id) === undefined ? {} : { operation: text(n?.operation_id) }),
    ...(amount === undefined ? {} : { amount: currency ? `${amount} ${currency}` : amount }),
    ...(key === undefined ? {} : { key }),
  };
}

const OPTIONAL_TEXT = ['outcome', 'code', 'hint', 'key', 'contentType'] as const;

/**
 * One line of a capture file as a delivery, or why it cannot be read (a torn line left by a full disk, a line
 * that is not a captured delivery). Lines of formats 1 to 3 are read; 2 adds `key`, `durationMs` and `hint`, 3
 * `answerHeaders`.
 */
export function readCaptureLine(raw: string, line: number, id: number): InspectedDelivery | UnreadableLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { line, reason: 'not JSON (a torn or foreign line)' };
  }
  const captured = value as Record<string, unknown> | null;
  if (captured === null || typeof captured !== 'object' || ![1, 2, 3].includes(captured.v as number)) {
    return { line, reason: 'not a captured delivery ({"v":1,…} to {"v":3,…})' };
  }
  const { at, status, durationMs, notification, answerHeaders } = captured;
  if (typeof at !== 'string') return { line, reason: '"at" is not a string' };
  if (!Number.isInteger(status)) return { line, reason: '"status" is not an HTTP status' };
  for (const name of OPTIONAL_TEXT) {
    if (captured[name] !== undefined && typeof captured[name] !== 'string') {
      return { line, reason: `"${name}" is not a string` };
    }
  }
  if (durationMs !== undefined && typeof durationMs !== 'number') {
    return { line, reason: '"durationMs" is not a number' };
  }
  if (answerHeaders !== undefined && !isTextRecord(answerHeaders)) {
    return { line, reason: '"answerHeaders" is not an object of texts' };
  }
  const isObject = typeof notification === 'object' && notification !== null && !Array.isArray(notification);
  if (notification !== undefined && notification !== null && !isObject) {
    return { line, reason: '"notification" is not an object' };
  }
  const optional = Object.fromEntries(
    OPTIONAL_TEXT.flatMap((name) => (captured[name] ? [[name, captured[name]]] : [])),
  );
  return describeDelivery(id, 'capture', {
    ...optional,
    line,
    at,
    status: status as number,
    ...(durationMs === undefined ? {} : { durationMs: durationMs as number }),
    ...(answerHeaders === undefined
      ? {}
      : { answerHeaders: maskDelivered(answerHeaders) as Record<string, string> }),
    ...(isObject ? { notification: notification as Record<string, unknown> } : {}),
  });
}

/** A fake service's attempt (`GET /__payhook/deliveries`) as a delivery. */
export function readFakeAttempt(attempt: Readonly<Record<string, unknown>>, id: number): InspectedDelivery {
  const body = typeof attempt.body === 'string' ? parseAnswer(attempt.body) : {};
  return describeDelivery(id, 'fake', {
    at: typeof attempt.at === 'string' ? attempt.at : new Date(String(attempt.at)).toISOString(),
    ...(typeof attempt.status === 'number' ? { status: attempt.status } : {}),
    ...body,
    ...(typeof attempt.body === 'string' ? { answer: maskDelivered(attempt.body) as string } : {}),
    ...(typeof attempt.url === 'string' ? { url: attempt.url } : {}),
    ...(isTextRecord(attempt.headers)
      ? { answerHeaders: maskDelivered(attempt.headers) as Record<string, string> }
      : {}),
    ...(typeof attempt.attempt === 'number' ? { attempt: attempt.attempt } : {}),
    ...(typeof attempt.error === 'string' ? { error: attempt.error } : {}),
    ...(typeof attempt.notification === 'object' && attempt.notification !== null
      ? { notification: attempt.notification as Record<string, unknown> }
      : {}),
  });
}

function isTextRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
  );
}

/** payhook's JSON answer (`{"outcome":"handled"}`, `{"error":{"code":…,"message":…}}`), when the receiver is payhook. */
function parseAnswer(body: string): { outcome?: string; code?: string; message?: string } {
  try {
    const answer = JSON.parse(body) as { outcome?: unknown; error?: { code?: unknown; message?: unknown } };
    const refused = answer.outcome === undefined && answer.error !== undefined;
    return {
      ...(typeof answer.outcome === 'string' ? { outcome: answer.outcome } : {}),
      // payhook's refusals carry an error and no outcome: called refused, as capture calls them.
      ...(refused ? { outcome: 'refused' } : {}),
      ...(typeof answer.error?.code === 'string' ? { code: answer.error.code } : {}),
      ...(typeof answer.error?.message === 'string'
        ? { message: maskDelivered(answer.error.message) as string }
        : {}),
    };
  } catch {
    return {};
  }
}

/** One field that differs between two deliveries of the same notification. */
export interface FieldChange {
  /** Dotted path (`fee.amount`). */
  readonly path: string;
  /** The JSON of the value before; absent when the field was added. */
  readonly before?: string;
  /** The JSON of the value after; absent when the field was removed. */
  readonly after?: string;
}

function flatten(value: unknown, prefix: string, into: Map<string, string>): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && prefix !== '') into.set(prefix, '{}');
    for (const [name, inner] of entries) flatten(inner, prefix === '' ? name : `${prefix}.${name}`, into);
    return;
  }
  into.set(prefix, JSON.stringify(value) ?? 'undefined');
}

/**
 * What a redelivery changed, field by field: changed, added and removed fields at any depth, in the order of
 * the later notification's fields, then the removed ones.
 *
 * @example
 * diffNotifications({ status: 'pending' }, { status: 'success', fee: 1 });
 * // [{ path: 'status', before: '"pending"', after: '"success"' }, { path: 'fee', after: '1' }]
 */
export function diffNotifications(before: unknown, after: unknown): FieldChange[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  flatten(before, '', a);
  flatten(after, '', b);
  const changes: FieldChange[] = [];
  for (const [path, value] of b) {
    const old = a.get(path);
    if (old === undefined) changes.push({ path, after: value });
    else if (old !== value) changes.push({ path, before: old, after: value });
  }
  for (const [path, value] of a) if (!b.has(path)) changes.push({ path, before: value });
  return changes;
}
