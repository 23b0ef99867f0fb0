import { readFile } from 'node:fs/promises';
import type { SignatureAlgorithm } from '@payhook/core';
import type { CapturedDelivery } from '@payhook/core/capture';
import { type SignedWebhook, signWebhook } from './sign.js';
import { postWebhook, type WebhookResponse, type WebhookTarget } from './supertest.js';

/**
 * How `replayDeliveries` re-signs and posts a capture.
 *
 * @example
 * await replayDeliveries(app, 'incident.jsonl', { secret: 'test-secret', path: '/payments/webhook' });
 */
export interface ReplayOptions {
  /** The secret the app under test is configured with: each delivery is signed again with it. */
  secret: string;
  /** @default 'sha256' */
  algorithm?: SignatureAlgorithm;
  /**
   * The path the webhook route is mounted on.
   * @default '/webhooks'
   */
  path?: string;
  /** Extra request headers (e.g. `x-forwarded-for` for `allowedSenders`). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Called with the line number of each line that is not JSON (torn by a full disk, or cut short), which is then
   * skipped; without it such a line rejects the replay before anything is posted.
   */
  onTornLine?: (line: number) => void;
}

/**
 * One captured delivery posted again: where it was in the file, what production answered then, what the app
 * answers now.
 *
 * @example
 * const [first]: ReplayedDelivery[] = await replayDeliveries(app, file, { secret });
 * expect([first.captured.code, first.response.status]).toEqual(['handler.failed', 200]);
 */
export interface ReplayedDelivery {
  /** 1-based line number in the capture. */
  readonly line: number;
  /** The line as captured: `status`, `outcome`, `code` of the production answer, the masked notification. */
  readonly captured: CapturedDelivery & { notification: Record<string, unknown> };
  /** The app's answer to the replay, with `expectHandled()` and friends. */
  readonly response: WebhookResponse;
}

/** A captured line that carries a notification: a line without one was refused before verification. */
export interface ReplayableLine {
  readonly line: number;
  readonly captured: CapturedDelivery & { notification: Record<string, unknown> };
}

/**
 * The lines of a capture file's text that can be replayed, in order; a line refused before its signature was
 * verified has no notification and is skipped. Throws on a line that is not a captured delivery (not JSON, or a
 * field of the wrong type), naming the line and the field, never quoting the line; with `onTornLine`, a line that
 * is not JSON is passed to it by number and skipped instead.
 */
export function replayableLines(
  text: string,
  source = 'the capture',
  options: Pick<ReplayOptions, 'onTornLine'> = {},
): ReplayableLine[] {
  const found: ReplayableLine[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!.trim();
    if (raw === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      if (options.onTornLine) {
        options.onTornLine(index + 1);
        continue;
      }
      throw new Error(
        `[@payhook/testing] ${source}, line ${index + 1}: not JSON (a capture has one object per line).`,
      );
    }
    const captured = parsed as Partial<CapturedDelivery> | null;
    if (captured === null || typeof captured !== 'object' || ![1, 2, 3].includes(captured.v as number)) {
      throw new Error(
        `[@payhook/testing] ${source}, line ${index + 1}: not a captured delivery (expected {"v":1,…} to {"v":3,…} from createCapture).`,
      );
    }
    const wrong = wrongField(captured);
    if (wrong !== undefined) {
      // The field's name and the type it needs, never its value: a capture holds customer data.
      throw new Error(
        `[@payhook/testing] ${source}, line ${index + 1}: ${wrong} (not a captured delivery from createCapture).`,
      );
    }
    const notification = captured.notification;
    if (notification !== null && notification !== undefined) {
      found.push({
        line: index + 1,
        captured: captured as CapturedDelivery & { notification: Record<string, unknown> },
      });
    }
  }
  return found;
}

/** What is wrong with a line's fields, as createCapture writes them; `undefined` when nothing is. */
function wrongField(captured: Partial<CapturedDelivery>): string | undefined {
  const { status, outcome, code, contentType, notification, answerHeaders } = captured;
  if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 599) {
    return '"status" is not an HTTP status';
  }
  if (typeof outcome !== 'string') return '"outcome" is not a string';
  if (code !== undefined && typeof code !== 'string') return '"code" is not a string';
  if (contentType !== undefined && typeof contentType !== 'string') return '"contentType" is not a string';
  if (answerHeaders !== undefined) {
    const texts =
      typeof answerHeaders === 'object' && answerHeaders !== null && !Array.isArray(answerHeaders);
    if (!texts || Object.values(answerHeaders).some((value) => typeof value !== 'string'))
      return '"answerHeaders" is not an object of texts';
  }
  if (notification !== undefined && notification !== null) {
    if (typeof notification !== 'object' || Array.isArray(notification))
      return '"notification" is not an object';
  }
  return undefined;
}

/** A captured delivery signed again with `secret`, in the envelope it came in (form, or JSON). */
export function resign(
  captured: CapturedDelivery & { notification: Record<string, unknown> },
  secret: string,
  algorithm?: SignatureAlgorithm,
): SignedWebhook {
  const json = captured.contentType?.toLowerCase().includes('json') ?? false;
  return signWebhook(captured.notification, secret, {
    variant: json ? 'json' : 'exact',
    ...(algorithm ? { algorithm } : {}),
  });
}

/**
 * Posts every delivery of a capture (a file written by core's `createCapture`, its text, or its parsed lines) to
 * an app in-process, in order, each re-signed with the test secret: the exact deliveries of an incident, with card
 * and customer fields as masked. Takes every target `postWebhook` takes. Lines refused before verification (no
 * notification) are skipped.
 *
 * @example
 * const replayed = await replayDeliveries(app, 'fixtures/incident-2026-11-20.jsonl', { secret: 'test-secret' });
 * for (const { response } of replayed) response.expectHandled();
 */
export async function replayDeliveries(
  target: WebhookTarget,
  capture: string | { readonly text: string },
  options: ReplayOptions,
): Promise<ReplayedDelivery[]> {
  const text = typeof capture === 'string' ? await readFile(capture, 'utf8') : capture.text;
  const source = typeof capture === 'string' ? capture : 'the capture';
  const replayed: ReplayedDelivery[] = [];
  const torn = options.onTornLine ? { onTornLine: options.onTornLine } : {};
  for (const { line, captured } of replayableLines(text, source, torn)) {
    const signed = resign(captured, options.secret, options.algorithm);
    const response = await postWebhook(target, signed, {
      secret: options.secret,
      ...(options.path ? { path: options.path } : {}),
      ...(options.headers ? { headers: options.headers } : {}),
    });
    replayed.push({ line, captured, response });
  }
  return replayed;
}
