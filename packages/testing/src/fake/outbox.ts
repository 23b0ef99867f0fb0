import { type SignatureAlgorithm, sign } from '@payhook/core';
import { encodeBase64Url } from '@payhook/core/adapter';
import type { Timeline } from './clock.js';
import { describeError, fetchTransport, type TransportAnswer, type WebhookTransport } from './transport.js';

/**
 * One delivery attempt, as `fake.deliveries` lists it.
 *
 * @example
 * expect(fake.deliveries.map((d: DeliveryAttempt) => [d.attempt, d.status])).toEqual([[1, 200]]);
 */
export interface DeliveryAttempt {
  /** The webhook's id: every attempt and copy of one webhook shares it. */
  readonly webhookId: number;
  /** 1 for the first attempt, then 2, 3… for retries. */
  readonly attempt: number;
  /** True for a copy made by the `duplicate` fault. */
  readonly duplicate: boolean;
  readonly url: string;
  /** The notification as sent (decoded). */
  readonly notification: Readonly<Record<string, unknown>>;
  readonly data: string;
  readonly signature: string;
  /** The fake clock's time of the attempt. */
  readonly at: Date;
  /** The receiver's status, absent when the request failed. */
  readonly status?: number;
  readonly body?: string;
  /** The receiver's answer headers, when the transport read them. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Why the request failed, with its cause: `fetch failed (connect ECONNREFUSED 127.0.0.1:3000)`. */
  readonly error?: string;
  /** True for a 2xx answer. */
  readonly ok: boolean;
}

/**
 * Delivery faults applied to every webhook enqueued while they are set.
 *
 * @example
 * fake.setDeliveryFaults({ duplicate: 1, delayMs: 5_000 });
 */
export interface DeliveryFaults {
  /**
   * Extra copies of each webhook, sent right after it.
   * @default 0
   */
  duplicate?: number;
  /**
   * How long (fake-clock ms) each webhook waits before its first attempt; it goes out when the clock passes it.
   * @default 0
   */
  delayMs?: number;
  /**
   * Lose every webhook enqueued while set: never attempted, listed in `outbox.dropped`.
   * @default false
   */
  drop?: boolean;
  /**
   * Lose the first attempt of every webhook enqueued while set: it never reaches the receiver (recorded as an
   * attempt with `error`), and the retry schedule sends it again, as the service does after any unanswered attempt.
   * @default false
   */
  loseFirstAttempt?: boolean;
  /**
   * Keep every webhook enqueued while set in the outbox, as `pause` does, until `resume` releases them.
   * @default false
   */
  hold?: boolean;
}

/** The `error` of an attempt lost to the `loseFirstAttempt` fault. */
export const LOST_ATTEMPT = 'lost on the way (fault): the receiver never saw this attempt';

interface Pending {
  webhookId: number;
  attempt: number;
  duplicate: boolean;
  /** The `loseFirstAttempt` fault: attempt 1 never reaches the receiver. */
  lose: boolean;
  dueAt: number;
  url: string;
  notification: Readonly<Record<string, unknown>>;
  data: string;
  signature: string;
}

/**
 * The default retry schedule after a non-2xx answer or a network failure, in fake-clock ms after the failed
 * attempt (the service's real schedule is not shown).
 *
 * @example
 * new FakeService({ secret, retrySchedule: DEFAULT_RETRY_SCHEDULE.slice(0, 2) });
 */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = [60_000, 300_000, 1_800_000, 7_200_000];

/** What tells one notification from another (a re-send repeats all of these). */
const IDENTITY = ['method', 'payment_id', 'operation_id', 'transaction_id', 'status', 'status_code'] as const;

/** The most of a receiver's answer `done()` quotes: enough for payhook's JSON answers and a short message. */
const QUOTED_ANSWER = 200;

/** ` with "…"`: the receiver's answer, whitespace collapsed, cut to `QUOTED_ANSWER` characters; '' when empty. */
function receiverSaid(body: string | undefined): string {
  const text = (body ?? '').replace(/\s+/g, ' ').trim();
  if (text === '') return '';
  const cut = text.length > QUOTED_ANSWER ? `${text.slice(0, QUOTED_ANSWER)}…` : text;
  return ` with ${JSON.stringify(cut)}`;
}

/** `outcome` of a payhook answer, if the body is one. */
function outcomeOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { outcome?: unknown } | null)?.outcome;
  } catch {
    return undefined;
  }
}

/**
 * Held items newest webhook first, each webhook's copies kept in their order: a reorder is of webhooks; copies are
 * identical, and the original still goes before its copies, as the timeline marks them.
 */
function newestFirst(held: readonly Pending[]): Pending[] {
  const webhooks = [...new Set(held.map((item) => item.webhookId))].reverse();
  return webhooks.flatMap((id) => held.filter((item) => item.webhookId === id));
}

interface OutboxOptions {
  now: () => number;
  transport?: WebhookTransport;
  retrySchedule?: readonly number[];
  algorithm?: SignatureAlgorithm;
}

/**
 * The webhooks waiting to go out and every attempt made. Deliveries are serial, in the order enqueued, so a
 * test sees the order the engine chose (or the reordering it asked for).
 */
export class Outbox implements Timeline {
  readonly #now: () => number;
  readonly #transport: WebhookTransport;
  readonly #algorithm: SignatureAlgorithm;

  /** The digest webhooks are signed with: `sha256` (the spec) or `sha1`. */
  get algorithm(): SignatureAlgorithm {
    return this.#algorithm;
  }
  #retrySchedule: readonly number[];
  #faults: DeliveryFaults = {};
  #queue: Pending[] = [];
  #held: Pending[] = [];
  #paused = false;
  #nextId = 1;
  #draining: Promise<void> = Promise.resolve();
  /** Notifications (by url and identity) some attempt reached the receiver with: it may have seen them. */
  readonly #reached = new Set<string>();
  readonly #firstAnsweredDuplicate: DeliveryAttempt[] = [];
  readonly attempts: DeliveryAttempt[] = [];
  /** Webhooks lost to the `drop` fault: the notification and where it would have gone. */
  readonly dropped: Array<{
    readonly url: string;
    readonly notification: Readonly<Record<string, unknown>>;
  }> = [];

  constructor(options: OutboxOptions) {
    this.#now = options.now;
    this.#transport = options.transport ?? fetchTransport;
    this.#retrySchedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE;
    this.#algorithm = options.algorithm ?? 'sha256';
  }

  /** Sets the faults for webhooks enqueued from now on; `{}` clears them. */
  setFaults(faults: DeliveryFaults): void {
    this.#faults = { ...faults };
  }

  /** Sets the retry schedule (fake-clock ms after each failed attempt; its length is the number of retries). */
  setRetrySchedule(schedule: readonly number[]): void {
    this.#retrySchedule = [...schedule];
  }

  /** Holds every webhook until `resume`, to deliver them later, late or out of order. */
  pause(): void {
    this.#paused = true;
  }

  /**
   * Releases held webhooks (`reverse` sends the newest webhook first, the copies of each in their order) and
   * delivers what is due.
   */
  resume(options?: { reverse?: boolean }): Promise<void> {
    this.#paused = false;
    const held = options?.reverse ? newestFirst(this.#held) : this.#held;
    this.#held = [];
    this.#queue.push(...held);
    return this.#drain();
  }

  /**
   * Every webhook no attempt of which was acknowledged (2xx) so far, one line each with its last answer or its
   * cause: `webhook #2 (purchase success, order o-1) to http://127.0.0.1:4000/webhooks: fetch failed (…)`.
   */
  undelivered(): string[] {
    const last = new Map<number, DeliveryAttempt>();
    const delivered = new Set<number>();
    for (const attempt of this.attempts) {
      if (attempt.ok) delivered.add(attempt.webhookId);
      else last.set(attempt.webhookId, attempt);
    }
    return [...last.values()]
      .filter((attempt) => !delivered.has(attempt.webhookId))
      .map((attempt) => {
        const n = attempt.notification;
        const what = `${String(n.method)} ${String(n.status)}, order ${String(n.order_id)}`;
        const why = attempt.error ?? `answered ${attempt.status}${receiverSaid(attempt.body)}`;
        return `webhook #${attempt.webhookId} (${what}) to ${attempt.url} was not delivered after ${attempt.attempt} attempt(s): ${why}`;
      });
  }

  /**
   * Every webhook answered `duplicate` by the first attempt of its notification to reach the receiver (whichever of
   * the original, a copy, a retry or a re-send arrived first), one line each with the cause and the fix: the
   * receiver's store remembers a notification this fake never delivered before, so the application never handled it.
   */
  unexpectedDuplicates(): string[] {
    return this.#firstAnsweredDuplicate.map((attempt) => {
      const n = attempt.notification;
      const what = `${String(n.method)} ${String(n.status)}, order ${String(n.order_id)}, payment ${String(n.payment_id)}`;
      return `webhook #${attempt.webhookId} (${what}) to ${attempt.url} was sent for the first time and answered "duplicate": the receiver's store remembers these ids from an earlier run (fixedIds: true, or a store kept between tests), so the application never handled it. Clear the store (or give each run its own key prefix), or drop fixedIds so each run gets fresh ids`;
    });
  }

  /** Webhooks held by `pause`. */
  get held(): number {
    return this.#held.length;
  }

  /** Signs `notification` with `secret` and queues it for `url`, applying the current faults; answers its webhook id. */
  enqueue(url: string, record: object, secret: string): number {
    const json = JSON.stringify(record);
    const data = encodeBase64Url(json);
    // What a receiver decodes, and a snapshot: later changes of the record do not show in the log.
    const notification: Readonly<Record<string, unknown>> = JSON.parse(json);
    const signature = sign(data, secret, { algorithm: this.#algorithm });
    const webhookId = this.#nextId++;
    if (this.#faults.drop) {
      this.dropped.push({ url, notification });
      return webhookId;
    }
    const dueAt = this.#now() + (this.#faults.delayMs ?? 0);
    const copies = 1 + Math.max(0, this.#faults.duplicate ?? 0);
    for (let i = 0; i < copies; i++) {
      const item = {
        webhookId,
        attempt: 1,
        duplicate: i > 0,
        lose: this.#faults.loseFirstAttempt === true,
        dueAt,
        url,
        notification,
        data,
        signature,
      };
      if (this.#paused || this.#faults.hold) this.#held.push(item);
      else this.#queue.push(item);
    }
    void this.#drain();
    return webhookId;
  }

  /** Resolves when every due webhook was attempted (held and future ones excepted). */
  idle(): Promise<void> {
    return this.#drain();
  }

  next(): number | undefined {
    let earliest: number | undefined;
    for (const item of this.#queue)
      if (earliest === undefined || item.dueAt < earliest) earliest = item.dueAt;
    return earliest;
  }

  run(): Promise<void> {
    return this.#drain();
  }

  #drain(): Promise<void> {
    const run = this.#draining.then(() => this.#deliverDue());
    this.#draining = run;
    return run;
  }

  async #deliverDue(): Promise<void> {
    for (;;) {
      const now = this.#now();
      const index = this.#queue.findIndex((item) => item.dueAt <= now);
      if (index < 0) return;
      const [item] = this.#queue.splice(index, 1);
      await this.#attempt(item!);
    }
  }

  async #attempt(item: Pending): Promise<void> {
    const at = new Date(this.#now());
    let answer: TransportAnswer | undefined;
    let error: string | undefined;
    if (item.lose && item.attempt === 1) error = LOST_ATTEMPT;
    else {
      try {
        answer = await this.#transport({ url: item.url, data: item.data, signature: item.signature });
      } catch (cause) {
        error = describeError(cause);
      }
    }
    const ok = answer !== undefined && answer.status >= 200 && answer.status < 300;
    const attempt: DeliveryAttempt = {
      webhookId: item.webhookId,
      attempt: item.attempt,
      duplicate: item.duplicate,
      url: item.url,
      notification: item.notification,
      data: item.data,
      signature: item.signature,
      at,
      ok,
      ...(answer ? { status: answer.status, body: answer.body } : {}),
      ...(answer?.headers ? { headers: answer.headers } : {}),
      ...(error !== undefined ? { error } : {}),
    };
    this.attempts.push(attempt);
    if (answer) {
      // Decided when it arrives, not when it was queued: a copy, a re-send or a retry may overtake the original.
      const identity = JSON.stringify([item.url, ...IDENTITY.map((field) => item.notification[field])]);
      if (ok && !this.#reached.has(identity) && outcomeOf(answer.body) === 'duplicate') {
        this.#firstAnsweredDuplicate.push(attempt);
      }
      this.#reached.add(identity);
    }
    const delay = this.#retrySchedule[item.attempt - 1];
    if (!ok && delay !== undefined) {
      this.#queue.push({ ...item, attempt: item.attempt + 1, dueAt: at.getTime() + delay });
    }
  }
}
