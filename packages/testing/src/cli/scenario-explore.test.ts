import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serializeScenario } from '../scenario/load.js';
import { parkedRefunds } from '../scenario/planted/parked-refunds.js';
import { PARKED_REFUND } from '../scenario/planted/scenarios.js';
import { PLANTED_SECRET, type PlantedApp, startPlantedApp } from '../scenario/planted/serve.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

let buggy: PlantedApp;
let fixed: PlantedApp;
let dir: string;
let scenarioFile: string;

beforeAll(async () => {
  buggy = await startPlantedApp(() => parkedRefunds({ fixed: false }));
  fixed = await startPlantedApp(() => parkedRefunds({ fixed: true }));
  dir = await mkdtemp(join(tmpdir(), `payhook-explore-cli-${process.pid}-`));
  scenarioFile = join(dir, 'parked-refund.yaml');
  await writeFile(scenarioFile, serializeScenario(PARKED_REFUND, 'yaml'));
});

afterAll(async () => {
  await Promise.all([buggy.close(), fixed.close()]);
  await rm(dir, { recursive: true, force: true });
});

async function cli(args: string[]) {
  const { io, out, err } = memoryIO('', { PAYHOOK_SECRET: PLANTED_SECRET });
  const code = await runCli(['scenario', ...args], io);
  return { code, out, err };
}

describe('payhook scenario explore', () => {
  it('prints the shrunk failure first as a scenario file, then its timeline, writes it with --out, its run with --report, and exits 1', async () => {
    const out = join(dir, 'failure.yaml');
    const report = join(dir, 'failure.json');
    const explored = await cli([
      'explore',
      scenarioFile,
      '--target',
      buggy.url,
      '--runs',
      '200',
      '--out',
      out,
      '--report',
      report,
    ]);
    expect(explored.code).toBe(1);
    const text = explored.out.join('\n');
    const file = await readFile(out, 'utf8');
    expect(
      text.startsWith(
        [
          '# ✘ planted-parked-refund: run 15 of seed 1 failed with 6 fault(s);',
          '#   shrunk in 15 runs to 2: step 2 delay 1000 ms, step 4 duplicate ×1.',
          `#   Run it again: payhook scenario run ${out} --target ${buggy.url}`,
          file.trimEnd(),
          '',
          '✘ failed (1)  scenario planted-parked-refund, seed ',
        ].join('\n'),
      ),
    ).toBe(true);
    expect(file).toContain('  - create:\n      as: other\n      amount: 60\n    faults:\n      delay: 1s\n');
    expect(file).toContain('  - refund:\n      payment: other\n    faults:\n      duplicate: 1\n');
    expect(text).toContain('✘ at the end (http): GET /orders/{other}: refunded is 120, expected 60');
    expect(explored.err).toEqual([`payhook scenario explore: wrote the failing scenario to ${out}`]);

    const written = JSON.parse(await readFile(report, 'utf8')) as { passed: boolean; failures: unknown[] };
    expect([written.passed, written.failures]).toEqual([
      false,
      [{ kind: 'http', message: 'GET /orders/{other}: refunded is 120, expected 60' }],
    ]);

    // The printed file is a scenario `payhook scenario run` fails again.
    const again = await cli(['run', out, '--target', buggy.url, '--seed', '2']);
    expect(again.code).toBe(1);
    expect(again.out[1]).toBe('  ✘ at the end (http): GET /orders/{other}: refunded is 120, expected 60');
  });

  it('says so when the app fails the scenario without any fault', async () => {
    const { code, out } = await cli([
      'explore',
      scenarioFile,
      '--target',
      'http://127.0.0.1:9/webhooks',
      '--runs',
      '1',
      '--seed',
      '5',
    ]);
    expect(code).toBe(1);
    expect(out[1]).toBe(
      "#   it fails without any fault: the app fails the scenario itself ('payhook scenario run' shows how).",
    );
  });

  it('exits 0 when every run passes', async () => {
    const { code, out } = await cli([
      'explore',
      scenarioFile,
      '--target',
      fixed.url,
      '--runs',
      '50',
      '--seed',
      '9',
    ]);
    expect(code).toBe(0);
    expect(out).toEqual(['✔ 50 runs of planted-parked-refund with seed 9: every run passed.']);
  });

  it('draws only the faults --faults names', async () => {
    const { code, out } = await cli([
      'explore',
      scenarioFile,
      '--target',
      buggy.url,
      '--runs',
      '200',
      '--faults',
      'duplicate',
      // Another seed than the first test's: the same seed against the same app would reuse its order ids.
      '--seed',
      '4',
    ]);
    expect(code).toBe(0);
    expect(out).toEqual(['✔ 200 runs of planted-parked-refund with seed 4: every run passed.']);
  });

  it('refuses an unknown fault, a seed out of range, a scenario that is not valid and a missing one (exit 2)', async () => {
    const bad = await cli(['explore', scenarioFile, '--target', fixed.url, '--faults', 'duplicate,reorder']);
    expect([bad.code, bad.err[0]]).toEqual([
      2,
      'payhook scenario: --faults takes drop, hold, duplicate, delay (comma-separated), not "reorder".',
    ]);
    const seed = await cli(['explore', scenarioFile, '--target', fixed.url, '--seed=-1']);
    expect([seed.code, seed.err[0]]).toEqual([
      2,
      'payhook scenario: --seed must be a whole number from 0 to 4294967295, not "-1".',
    ]);
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'name: broken\nsteps:\n  - refund: { amount: 5 }\n');
    const invalid = await cli(['explore', broken, '--target', fixed.url]);
    expect([invalid.code, invalid.out]).toEqual([2, []]);
    expect(invalid.err[0]).toBe(`payhook scenario: ${broken} is not a valid scenario:`);
    const none = await cli(['explore', '--target', fixed.url]);
    expect([none.code, none.err[0]]).toEqual([
      2,
      'payhook scenario: name the scenario: a file or a built-in name.',
    ]);
  });
});
