import { readFile } from 'node:fs/promises';
import { escapeHtml } from '../pages/layout.js';
import type { ScenarioRun, TimelineEntry } from '../scenario/types.js';

const STYLES = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #f6f6f8; }
header { padding: 8px 16px; background: #1d1d1f; color: #fff; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 16px; margin: 0; }
header a { color: #cfe0ff; }
main { padding: 12px; }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 10px; margin-bottom: 12px; overflow-wrap: anywhere; }
.passed { color: #0a6b2d; } .failed { color: #b00020; }
.failures li { color: #7a0016; font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
tr.step td { background: #f0f4ff; font-weight: 600; }
tr.failure td { color: #b00020; font-weight: 600; }
td.time { white-space: nowrap; width: 11em; color: #555; }
.copy, .retry { color: #8a6d00; }
`;

function isRun(value: unknown): value is ScenarioRun {
  const run = value as ScenarioRun | null;
  return (
    typeof run === 'object' &&
    run !== null &&
    typeof run.passed === 'boolean' &&
    Array.isArray(run.timeline) &&
    Array.isArray(run.failures) &&
    typeof run.scenario?.name === 'string'
  );
}

/** The run `payhook scenario run --report FILE` wrote; an error naming the file when it is not one. */
export async function readScenarioRun(file: string): Promise<ScenarioRun> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} cannot be read as a scenario run: ${(error as Error).message}`);
  }
  if (!isRun(value))
    throw new Error(`${file} is not a scenario run ('payhook scenario run … --report FILE' writes one)`);
  return value;
}

function row(entry: TimelineEntry): string {
  const time = `<td class="time">${escapeHtml(entry.at.replace('T', ' ').slice(0, 19))}</td>`;
  switch (entry.type) {
    case 'step':
      return `<tr class="step">${time}<td colspan="4">${entry.index + 1}. ${escapeHtml(entry.what)}</td></tr>`;
    case 'failure':
      return `<tr class="failure">${time}<td colspan="4">✘ ${escapeHtml(entry.message)}</td></tr>`;
    case 'delivery': {
      const which = [
        `#${entry.webhook}`,
        entry.attempt > 1 ? `<span class="retry">attempt ${entry.attempt}</span>` : '',
        entry.copy ? '<span class="copy">copy</span>' : '',
      ]
        .filter(Boolean)
        .join(' ');
      const answer = entry.error ?? `${entry.status ?? '-'} ${entry.outcome ?? ''}`;
      return `<tr>${time}<td>${which}</td><td>${escapeHtml(entry.event)}</td><td>${escapeHtml(entry.order)}</td><td>${escapeHtml(answer)}</td></tr>`;
    }
  }
}

/**
 * A scenario run as a page: the verdict and the failures first, then the timeline (steps, each delivery with its
 * attempt, copy, event, order and the app's answer), every value escaped; no script.
 */
export function renderScenarioPage(run: ScenarioRun, nonce: string, backLink: string): string {
  const verdict = run.passed
    ? '<strong class="passed">✔ passed</strong>'
    : `<strong class="failed">✘ failed (${run.failures.length})</strong>`;
  const failures =
    run.failures.length === 0
      ? ''
      : `<ul class="failures">${run.failures
          .map(
            (f) =>
              `<li>${f.step === undefined ? 'at the end' : `step ${f.step + 1}`} (${escapeHtml(f.kind)}): ${escapeHtml(f.message)}</li>`,
          )
          .join('')}</ul>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>payhook inspect: scenario ${escapeHtml(run.scenario.name)}</title>
<link rel="icon" href="data:,">
<style nonce="${escapeHtml(nonce)}">${STYLES}</style>
</head>
<body>
<header><h1>Scenario ${escapeHtml(run.scenario.name)}</h1><span>seed ${escapeHtml(String(run.seed))}</span><a href="${escapeHtml(backLink)}">deliveries</a></header>
<main>
<section aria-label="Verdict"><p>${verdict}${run.scenario.description ? ` · ${escapeHtml(run.scenario.description)}` : ''}</p>${failures}</section>
<section aria-label="Timeline">
<table><thead><tr><th>Fake clock</th><th>Webhook</th><th>Event</th><th>Order</th><th>Answer</th></tr></thead>
<tbody>${run.timeline.map(row).join('\n')}</tbody></table>
</section>
</main>
</body>
</html>
`;
}
