import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { builtInScenarios } from './builtins.js';
import { runScenario } from './runner.js';
import { startTestApp, type TestApp } from './test-app.js';

const DOC = readFileSync(new URL('../../../../docs/scenarios.md', import.meta.url), 'utf8');
/** The part of the page after its "Built-in lives" heading. */
const BUILT_INS = DOC.slice(DOC.indexOf('## Built-in lives'));
const SECRET = 'scenario-docs-secret';

/** The built-ins table of docs/scenarios.md: name → [what happens, webhooks]. */
const documented = new Map(
  [...BUILT_INS.matchAll(/^\| `([a-z0-9-]+)` \| (.+?) \| (.+?) \|$/gm)].map((m) => [m[1]!, [m[2]!, m[3]!]]),
);
let app: TestApp | undefined;

afterEach(async () => {
  await app?.close();
});

describe('docs/scenarios.md', () => {
  it('lists every built-in, and only those', () => {
    expect([...documented.keys()].sort()).toEqual(builtInScenarios().map((s) => s.name));
  });

  it.each(builtInScenarios().map((s) => [s.name, s] as const))(
    'says what %s does and the webhooks it sends, as a run shows them',
    async (name, scenario) => {
      app = await startTestApp(SECRET);
      const run = await runScenario(scenario, { target: app.target, secret: SECRET, ledger: app.ledger });
      const webhooks = run.timeline
        .flatMap((e) => (e.type === 'delivery' ? [e] : []))
        .map((e) => {
          const which = `${e.event}${e.copy ? ' (copy)' : ''}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`;
          return e.error === undefined ? `${which} → ${e.outcome}` : `${which} (lost)`;
        })
        .join('; ');
      expect(documented.get(name)).toEqual([scenario.description, webhooks]);
    },
  );
});
