import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from '../scenario/runner.js';
import type { ScenarioRun } from '../scenario/types.js';
import { type Inspector, startInspector } from './server.js';

describe('payhook inspect --scenario: a run’s timeline as a page', () => {
  let dir: string;
  let file: string;
  let inspector: Inspector;
  let run: ScenarioRun;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-scenario-'));
    file = join(dir, 'run.json');
    // Nothing listens on port 9: every attempt fails, so the page has failures and retries to show.
    run = await runScenario('auth-voided', { target: 'http://127.0.0.1:9/webhooks', secret: 's' });
    const hostile = { ...run, scenario: { ...run.scenario, description: '<script>alert(1)</script>' } };
    await writeFile(file, JSON.stringify(hostile));
    inspector = await startInspector({ scenario: file });
  });
  afterAll(async () => {
    await inspector?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('shows the verdict and the failures before the timeline, every value escaped, under a CSP with no script', async () => {
    const response = await fetch(inspector.url.replace('/?token=', '/scenario?token='));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'nonce-/);
    const page = await response.text();
    expect(page).toContain(`<strong class="failed">✘ failed (${run.failures.length})</strong>`);
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page.indexOf('class="failures"')).toBeLessThan(page.indexOf('aria-label="Timeline"'));
    expect(page).toContain(
      '<tr class="step"><td class="time">2026-01-01 09:00:00</td><td colspan="4">1. create order method=auth amount=45.5</td></tr>',
    );
    expect(page).toContain('<span class="retry">attempt 2</span>');
  });

  it('refuses the page without the token, and says when the file is not a run', async () => {
    expect((await fetch(inspector.url.replace(/\/\?token=.*/, '/scenario'))).status).toBe(403);
    await writeFile(file, '{"not":"a run"}');
    const response = await fetch(inspector.url.replace('/?token=', '/scenario?token='));
    expect([response.status, await response.text()]).toEqual([
      404,
      `${file} is not a scenario run ('payhook scenario run … --report FILE' writes one)\n`,
    ]);
  });
});
