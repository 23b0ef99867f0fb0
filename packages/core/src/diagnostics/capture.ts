import type { FileHandle } from 'node:fs/promises';
import type { WebhookResult } from '../http/answers.js';
import { getHeader } from '../http/body.js';
import type { HeaderBag } from '../http/request.js';
import { invalidNotificationObject } from '../notification/parse.js';
import type { Notification } from '../notification/types.js';
import {
  objectWith,
  optionalFunction,
  optionalStrings,
  optionError,
  positive,
  positiveInteger,
} from '../option-checks.js';
import { utf8Bytes } from '../runtime/bytes.js';
import { createMasker, DEFAULT_MASKED_FIELDS, maskCardNumbers } from './capture-mask.js';

export { DEFAULT_MASKED_FIELDS } from './capture-mask.js';

/**
 * One line of a capture file. `notification` is the decoded object as the service sent it, masked; it is absent
 * when the delivery was refused before its signature was verified (nothing trustworthy to keep). A delivery whose
 * signature matched but whose notification lacked a required field (`notification.invalid`) keeps it too.
 */
export interface CapturedDelivery {
  /**
   * The format version of the line: 2 adds `key`, `durationMs` and `hint`, 3 adds `answerHeaders`; readers take
   * every version, a field a version lacks is absent.
   */
  v: 1 | 2 | 3;
  /** When the answer was given (ISO 8601, UTC). */
  at: string;
  status: number;
  outcome: WebhookResult['outcome'];
  /** The refusal's code (`handler.failed`, `signature.invalid`, …). */
  code?: string;
  /** The request's media type: a replay posts the same envelope (form or JSON). */
  contentType?: string;
  notification?: Record<string, unknown>;
  /** The notification key: every delivery of one notification shares it. */
  key?: string;
  /** From the request to the answer, in milliseconds (0.1 ms steps). */
  durationMs?: number;
  /** What most likely caused a refused signature (`sha1`, `secret_whitespace`: docs/errors.md). */
  hint?: string;
  /**
   * The sender's address as the handler read it (`WebhookResult.sender`): with `allowedSenders` or `relay` only,
   * the original sender for a delivery through the relay.
   */
  sender?: string;
  /**
   * The answer's headers that payhook sets (`content-type`, `retry-after`, `allow`, `connection`), names in lower
   * case; no other header is kept.
   */
  answerHeaders?: Record<string, string>;
}

/** The answer headers a line keeps: those core's answers carry (http/answers.ts, `WebhookError.headers`). */
const ANSWER_HEADERS: ReadonlySet<string> = new Set(['content-type', 'retry-after', 'allow', 'connection']);

/** The answer's headers payhook sets, by an allowlist: whatever else reached the result is never written. */
function answerHeadersOf(headers: Record<string, string>): Record<string, string> | undefined {
  const kept: Record<string, string> = {};
  let any = false;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!ANSWER_HEADERS.has(lower) || typeof value !== 'string') continue;
    kept[lower] = value.slice(0, 100);
    any = true;
  }
  return any ? kept : undefined;
}

/** What only the handler knows of a delivery, beside its request and answer. */
export interface CaptureFacts {
  readonly key?: string;
  readonly durationMs?: number;
}

/**
 * Where and how `capture` records deliveries. Give `path` (a JSON-lines file, rotated) or `write` (each line,
 * without its newline, to your own sink).
 *
 * @example
 * const capture = createCapture({ path: '/var/log/payhook/deliveries.jsonl', maxBytes: 50 * 1024 * 1024 });
 */
export interface CaptureOptions {
  /** A file to append JSON lines to; it is renamed to `<path>.1` (replacing an older one) when it reaches `maxBytes`. */
  path?: string;
  /** Receives each line instead of a file. A throw or a rejection loses that line, never the answer. */
  write?: (line: string) => unknown;
  /**
   * Field names whose values are replaced by `"[masked]"` at any depth, compared without regard to case or the
   * separators `_` and `-` (`cardNumber`, `card_number` and `CARD-NUMBER` are one name); a name ending in `*`
   * masks every name starting with it (`customer_*`). Whatever this list says, card data is masked too: a name
   * starting with `cc` or naming a card, CVV, CVC, security code, expiry, PAN or cryptogram, and any run of 13–19
   * digits that passes the Luhn check, in any string (JSON text inside `payload` included) and in the media type.
   * @default DEFAULT_MASKED_FIELDS (card token and mask, card data, `customer_*`, `payer_*`, email, phone, receipt and 3DS links)
   */
  mask?: readonly string[];
  /**
   * With `path`: the size at which the file is rotated, so the disk holds at most about twice this.
   * @default 10_485_760 (10 MiB)
   */
  maxBytes?: number;
  /**
   * Lines waiting for a slow writer; a line beyond this is dropped (counted in `dropped`), never waited for.
   * @default 1_000
   */
  maxQueue?: number;
  /**
   * Where a failing writer is reported (once per failure streak, without the line); `false` for nowhere.
   * @default console
   */
  logger?: Pick<Console, 'warn'> | false;
}

/**
 * Records deliveries off the answer's path: `record` only queues a line; writing happens later, one line at a
 * time. Pass it as `createWebhookHandler({ capture })`.
 *
 * @example
 * const capture = createCapture({ path: 'deliveries.jsonl' });
 * const webhook = createWebhookHandler({ secret, capture });
 * process.on('SIGTERM', async () => { await capture.flush(5_000); process.exit(0); });
 */
export interface DeliveryCapture {
  /** Queues one delivery's line. Never throws. */
  record(request: { headers: HeaderBag }, result: WebhookResult, facts?: CaptureFacts): void;
  /**
   * Resolves when every queued line was written (or failed), or once `timeoutMs` passed: a writer that hangs
   * (a stalled disk or log sink) must not keep a shutdown waiting forever.
   */
  flush(timeoutMs?: number): Promise<void>;
  /** Lines dropped because the queue was full or the line could not be built. */
  readonly dropped: number;
  /** Lines whose write failed. */
  readonly failed: number;
}

/**
 * Creates a delivery capture: JSON lines of what replay needs (the masked notification, the media type, the
 * answer), never the signature, a secret or another header. `replayDeliveries` in `@payhook/testing` and
 * `payhook replay` post them again, re-signed with a test secret.
 *
 * @example
 * const capture = createCapture({ path: 'deliveries.jsonl', mask: [...DEFAULT_MASKED_FIELDS, 'payload'] });
 * createWebhookHandler({ secret: process.env.WEBHOOK_SECRET!, capture });
 */
export function createCapture(options: CaptureOptions): DeliveryCapture {
  if (typeof options !== 'object' || options === null)
    throw optionError('capture', '{ path | write, … }', options);
  const maxQueue = positiveInteger('capture.maxQueue', options.maxQueue, 1_000);
  const mask = optionalStrings('capture.mask', options.mask) ?? DEFAULT_MASKED_FIELDS;
  const logger = checkedLogger(options.logger);
  return new CaptureQueue(sinkOf(options), createMasker(mask), maxQueue, logger);
}

function checkedLogger(logger: unknown): Pick<Console, 'warn'> | false {
  if (logger === undefined) return console;
  if (logger === false) return false;
  return objectWith<Pick<Console, 'warn'>>(
    'capture.logger',
    logger,
    ['warn'],
    'false or an object with warn, such as console',
  );
}

/** Lines waiting for the sink, written one at a time after the answer went out; full, it drops (and counts). */
class CaptureQueue implements DeliveryCapture {
  readonly #queue: string[] = [];
  #draining: Promise<void> | undefined;
  #dropped = 0;
  #failed = 0;
  /** Set from a failed write until one succeeds: one warning per failure streak. */
  #failing = false;

  readonly #sink: (line: string) => unknown;
  readonly #mask: (value: unknown) => unknown;
  readonly #maxQueue: number;
  readonly #logger: Pick<Console, 'warn'> | false;

  constructor(
    sink: (line: string) => unknown,
    mask: (value: unknown) => unknown,
    maxQueue: number,
    logger: Pick<Console, 'warn'> | false,
  ) {
    this.#sink = sink;
    this.#mask = mask;
    this.#maxQueue = maxQueue;
    this.#logger = logger;
  }

  get dropped(): number {
    return this.#dropped;
  }

  get failed(): number {
    return this.#failed;
  }

  record(request: { headers: HeaderBag }, result: WebhookResult, facts: CaptureFacts = {}): void {
    try {
      if (this.#queue.length >= this.#maxQueue) {
        this.#dropped++;
        return;
      }
      this.#queue.push(JSON.stringify(captured(request, result, facts, this.#mask)));
      this.#draining ??= this.#drain();
    } catch {
      this.#dropped++;
    }
  }

  async flush(timeoutMs?: number): Promise<void> {
    const drained = (async () => {
      while (this.#draining) await this.#draining;
    })();
    if (timeoutMs === undefined) return drained;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    try {
      await Promise.race([drained, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #drain(): Promise<void> {
    // Let the answer go out first: a writer that works synchronously must not delay it.
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    for (let line = this.#queue.shift(); line !== undefined; line = this.#queue.shift()) {
      try {
        await this.#sink(line);
        this.#failing = false;
      } catch (error) {
        this.#failed++;
        if (!this.#failing) this.#warn(error);
        this.#failing = true;
      }
    }
    this.#draining = undefined;
  }

  #warn(error: unknown): void {
    if (!this.#logger) return;
    try {
      // The code only (ENOSPC, EACCES): a writer's message could quote the line.
      const code = (error as { code?: unknown } | null)?.code;
      const why = typeof code === 'string' ? ` (${code})` : '';
      this.#logger.warn(`[@payhook/core] a delivery could not be captured${why}; answers are not affected.`);
    } catch {
      // A failing logger changes nothing either.
    }
  }
}

/**
 * The handler with capture (checked by the handler's options): the answer is returned as the handler gave it;
 * recording cannot change or delay it.
 */
export function withCapture<R extends { headers: HeaderBag }, C>(
  handle: (request: R, context: C) => Promise<WebhookResult>,
  capture: DeliveryCapture,
  keyFor: (notification: Notification) => string | undefined,
): (request: R, context: C) => Promise<WebhookResult> {
  return async (request, context) => {
    const started = performance.now();
    const result = await handle(request, context);
    try {
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const key = result.notification ? keyFor(result.notification) : undefined;
      capture.record(request, result, key === undefined ? { durationMs } : { key, durationMs });
    } catch {
      // createCapture's never throws; one the application made itself must not change the answer either.
    }
    return result;
  };
}

function captured(
  request: { headers: HeaderBag },
  result: WebhookResult,
  facts: CaptureFacts,
  mask: (value: unknown) => unknown,
): CapturedDelivery {
  const hint = (result.error as { hint?: unknown } | undefined)?.hint;
  // The media type alone: parameters are the sender's text, unsigned, and replay needs only form or JSON. Masked
  // before it is cut, so no card number is cut down to digits the Luhn check no longer finds.
  const header = getHeader(request.headers, 'content-type');
  const media = header?.split(';', 1)[0]?.trim().toLowerCase();
  const contentType = media === undefined ? undefined : maskCardNumbers(media).slice(0, 100);
  // Refused as `notification.invalid`: its signature matched, so its object is kept as a handled one's is.
  const raw = result.notification?.raw ?? invalidNotificationObject(result.error);
  const answerHeaders = answerHeadersOf(result.headers);
  return {
    v: 3,
    at: new Date().toISOString(),
    status: result.status,
    outcome: result.outcome,
    ...(result.error ? { code: result.error.code } : {}),
    ...(typeof hint === 'string' ? { hint } : {}),
    ...(facts.key === undefined ? {} : { key: facts.key }),
    ...(facts.durationMs === undefined ? {} : { durationMs: facts.durationMs }),
    ...(contentType ? { contentType } : {}),
    ...(result.sender === undefined ? {} : { sender: maskCardNumbers(result.sender).slice(0, 100) }),
    ...(answerHeaders ? { answerHeaders } : {}),
    ...(raw ? { notification: mask(raw) as Record<string, unknown> } : {}),
  };
}

function sinkOf(options: CaptureOptions): (line: string) => unknown {
  const write = optionalFunction('capture.write', options.write);
  if (write) return write;
  if (typeof options.path !== 'string' || options.path === '') {
    throw optionError(
      'capture.path',
      'a file name (of a JSON-lines file) when capture.write is not set',
      options.path,
    );
  }
  const maxBytes = positive('capture.maxBytes', options.maxBytes, 10 * 1024 * 1024);
  return rotatingFile(options.path, maxBytes);
}

/**
 * Appends lines to `path`; before a line would take it past `maxBytes`, the file becomes `<path>.1`. `node:fs` is
 * loaded on the first line, so the handler's module graph stays free of it on runtimes without a file system.
 */
function rotatingFile(path: string, maxBytes: number): (line: string) => Promise<void> {
  // Set when a torn line could not be cut off: the next line then starts on a line of its own.
  let torn = false;
  return async (line) => {
    const { open, rename, stat } = await import('node:fs/promises');
    const bytes = utf8Bytes(`${torn ? '\n' : ''}${line}\n`);
    // Measured before each line, not counted: other processes (cluster workers) may append to the same path.
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    if (size > 0 && size + bytes.length > maxBytes) {
      // Gone meanwhile (deleted, or rotated by another process): nothing to rotate, append starts a new file.
      await rename(path, `${path}.1`).catch((error: unknown) => {
        if ((error as { code?: unknown } | null)?.code !== 'ENOENT') throw error;
      });
    }
    const file = await open(path, 'a', 0o600);
    try {
      await appendWhole(file, bytes);
      torn = false;
    } catch (error) {
      if ((error as { torn?: unknown }).torn === true) torn = true;
      throw error;
    } finally {
      await file.close();
    }
  };
}

/**
 * Appends `bytes` in one write, whole or not at all: the part a full disk took (a short write) is cut off again,
 * so a torn line never has the next line appended to it. Throws `ENOSPC` on a short write, with `torn: true` when
 * the part written could not be cut off.
 */
async function appendWhole(file: FileHandle, bytes: Uint8Array): Promise<void> {
  // One write call: Node reports an error only when no byte was written, else the count it wrote.
  const { bytesWritten } = await file.write(bytes);
  if (bytesWritten === bytes.length) return;
  let torn = false;
  try {
    // Appended at the end: the torn part is the file's last bytes (the disk is full, nobody wrote after it).
    const { size } = await file.stat();
    await file.truncate(size - bytesWritten);
  } catch {
    torn = true;
  }
  throw Object.assign(new Error('[@payhook/core] the disk took part of a capture line only.'), {
    code: 'ENOSPC',
    torn,
  });
}
