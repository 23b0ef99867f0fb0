import { LOST_ATTEMPT } from '../fake/outbox.js';
import type { ScenarioRun, TimelineEntry } from './types.js';

/** The fake clock's time: `2026-01-01 09:00:00` where the day changed since the line before, `09:00:00` otherwise. */
function clockOf(at: string, previous: string | undefined): string {
  const clock = at.slice(11, 19);
  return previous?.slice(0, 10) === at.slice(0, 10) ? clock : `${at.slice(0, 10)} ${clock}`;
}

/** The payment's scenario name in an order id `<scenario>-<as>-s<seed>`, or the order id of any other. */
function paymentName(order: string, run: ScenarioRun): string {
  const prefix = `${run.scenario.name}-`;
  const suffix = `-s${run.seed}`;
  return order.startsWith(prefix) && order.endsWith(suffix)
    ? order.slice(prefix.length, -suffix.length)
    : order;
}

function lineOf(entry: TimelineEntry, previous: string | undefined, run: ScenarioRun): string {
  const at = clockOf(entry.at, previous).padStart(19);
  switch (entry.type) {
    case 'step':
      return `${at}  ${String(entry.index + 1).padStart(2)}. ${entry.what}`;
    case 'delivery': {
      const which = `#${entry.webhook}${entry.attempt > 1 ? ` attempt ${entry.attempt}` : ''}${entry.copy ? ' copy' : ''}`;
      const error = entry.error === LOST_ATTEMPT ? 'lost (drop fault)' : entry.error;
      const answer = error ?? `${entry.status ?? '-'} ${entry.outcome ?? ''}`.trim();
      const what = `${entry.event} (${paymentName(entry.order, run)})`;
      return `${at}        → ${which.padEnd(18)} ${what.padEnd(30)} ${answer}`;
    }
    case 'failure':
      return `${at}      ✘ ${entry.message}`;
  }
}

/**
 * A run as people read it in a terminal: the verdict and the failures first, then every step with the deliveries
 * it caused (webhook, attempt, copy, event and payment, the app's status and outcome), each at its fake-clock time.
 *
 * @example
 * const run = await runScenario('auth-voided', { target, secret });
 * console.log(formatTimeline(run));
 */
export function formatTimeline(run: ScenarioRun): string {
  const lines: string[] = [];
  const verdict = run.passed ? '✔ passed' : `✘ failed (${run.failures.length})`;
  lines.push(`${verdict}  scenario ${run.scenario.name}, seed ${run.seed}`);
  for (const failure of run.failures) {
    const where = failure.step === undefined ? 'at the end' : `step ${failure.step + 1}`;
    lines.push(`  ✘ ${where} (${failure.kind}): ${failure.message}`);
  }
  if (run.timeline.some((entry) => entry.type === 'delivery' && entry.outcome === 'signature.invalid')) {
    lines.push(
      '  hint: the app refused the signature: sign with the secret it verifies (--secret, PAYHOOK_SECRET)',
    );
  }
  lines.push('');
  let previous: string | undefined;
  for (const entry of run.timeline) {
    lines.push(lineOf(entry, previous, run));
    previous = entry.at;
  }
  return lines.join('\n');
}
