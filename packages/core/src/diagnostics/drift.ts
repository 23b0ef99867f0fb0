import type { DriftFinding } from '../notification/drift.js';
import type { Notification } from '../notification/types.js';
import { driftSubscribed, publishDrift } from './channels.js';
import { printable } from './printable.js';

/** A method or status as drift names it in a log line or an event: cut as a finding's name is. */
const NAME_LENGTH = 64;

type Logger = Pick<Console, 'warn'> | false;

/** What was logged in this process: each finding once, whichever handler saw it first. */
const logged = new Set<string>();
/** Past this many, nothing more is logged (a sender inventing a name per delivery must not fill the memory). */
const MAX_LOGGED = 1_000;

/**
 * What a verified notification carried beyond what payhook types (`findDrift`, which the handler asks only while a
 * logger is set or anyone listens): published on `payhook:drift` when anyone listens, each new finding logged once
 * per process.
 */
export function reportDrift(
  notification: Notification,
  findings: readonly DriftFinding[],
  logger: Logger,
): void {
  const method = printable(String(notification.method), NAME_LENGTH);
  if (driftSubscribed()) {
    publishDrift(`${method}.${printable(String(notification.status), NAME_LENGTH)}`, findings);
  }
  if (logger) logNew(logger, method, findings);
}

function logNew(logger: Pick<Console, 'warn'>, method: string, findings: readonly DriftFinding[]): void {
  const fresh: string[] = [];
  for (const finding of findings) {
    const id = `${finding.kind}:${finding.name}:${finding.sent ?? ''}`;
    if (logged.has(id) || logged.size >= MAX_LOGGED) continue;
    logged.add(id);
    fresh.push(describe(finding));
  }
  if (fresh.length === 0) return;
  try {
    logger.warn(
      `[@payhook/core] a "${method}" notification carried what payhook does not type: ${fresh.join('; ')}. It was handled as before (everything sent stays in notification.raw); each such name is logged once per process and counted on the payhook:drift channel (docs/observability.md).`,
    );
  } catch {
    // A failing logger must not change the answer.
  }
}

/** A finding in words: names and types, never a value. */
function describe({ kind, name, sent, expected }: DriftFinding): string {
  // Already printable (`findDrift` escapes them): JSON.stringify would double every escape's backslash.
  const quoted = `"${name}"`;
  if (kind === 'type') return `${quoted} sent as ${sent} (typed ${expected})`;
  if (kind === 'coerced') return `${quoted} sent as ${sent}, coerced to ${expected}`;
  return `new ${kind.replace('_', ' ')} ${quoted}`;
}
