import { type DriftFinding, findDrift, PayloadError, parseNotification } from '@payhook/core';
import { replayableLines } from '../replay.js';
import { onePositional, readInput, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { printable } from './io.js';

const DRIFT_HELP = `Usage: payhook drift [--json] FILE

Summarises what the notifications of a capture file (JSON lines written by core's createCapture, as 'payhook
replay' reads them; - for standard input) carried beyond what payhook types: new fields, statuses, status codes
and methods, typed fields sent as another type (a field turned nullable), and values payhook coerced into their
type (an amount sent as text). Each with how many notifications carried it; names only, never a value. Fields
the capture masked read as text, so only a masked field sent as null shows its type change.
Exits 0 when nothing drifted, 1 when something did, 2 on a bad invocation or a line that is not a capture.

Options:
  --json      print one JSON object instead: {"notifications","drifted","findings":[{"kind","name","sent"?,
              "expected"?,"notifications"}]}, the findings most frequent first (for CI and dashboards)
  -h, --help  this help

Example:
  payhook drift /var/log/payhook/deliveries.jsonl`;

/** `payhook drift`: the drift of a capture, counted. */
export const driftCommand = defineCommand({
  help: DRIFT_HELP,
  options: { flag: 'json' },
  positionals: true,
  run: async ({ positionals, values }, io) => {
    const file = onePositional(positionals, 'name the capture file.', 'name one capture file.');
    const text = await readInput(file, io, 'the capture');
    let lines: ReturnType<typeof replayableLines>;
    try {
      lines = replayableLines(text, file === '-' ? 'standard input' : file);
    } catch (error) {
      throw new UsageError((error as Error).message.replace('[@payhook/testing] ', ''));
    }
    const counts = new Map<string, { finding: DriftFinding; notifications: number }>();
    let drifted = 0;
    for (const { line, captured } of lines) {
      let findings: DriftFinding[] | undefined;
      try {
        findings = findDrift(parseNotification(captured.notification));
      } catch (error) {
        // Names only: the required fields it lacks or holds in another type (a field dropped is drift too).
        const fields = error instanceof PayloadError ? error.fields.map(printable).join(', ') : '';
        const missing = fields === '' ? '' : `, missing or malformed: ${fields}`;
        io.stderr(`line ${line}: not a notification payhook parses${missing} (skipped)`);
        continue;
      }
      if (findings === undefined) continue;
      drifted++;
      for (const finding of findings) {
        const id = `${finding.kind}\0${finding.name}\0${finding.sent ?? ''}`;
        const seen = counts.get(id) ?? { finding, notifications: 0 };
        seen.notifications++;
        counts.set(id, seen);
      }
    }
    const rows = [...counts.values()].sort((a, b) => b.notifications - a.notifications);
    if (values.json) {
      const findings = rows.map(({ finding, notifications }) => ({ ...finding, notifications }));
      io.stdout(printable(JSON.stringify({ notifications: lines.length, drifted, findings })));
      return drifted === 0 ? 0 : 1;
    }
    io.stdout(`${drifted} of ${lines.length} captured notifications carried what payhook does not type`);
    for (const { finding, notifications } of rows) io.stdout(`  ${describe(finding)}: ${notifications}`);
    return drifted === 0 ? 0 : 1;
  },
});

/**
 * One finding as a row label; `findDrift` escaped its name already (control and bidi characters as `\u{…}`), and
 * the IO escapes whatever else could reach the terminal, so it is quoted as it is.
 */
function describe({ kind, name, sent, expected }: DriftFinding): string {
  const shown = `"${name}"`;
  if (kind === 'type') return `${shown} sent as ${sent} (typed ${expected})`;
  if (kind === 'coerced') return `${shown} sent as ${sent}, coerced to ${expected}`;
  return `new ${kind.replace('_', ' ')} ${shown}`;
}
