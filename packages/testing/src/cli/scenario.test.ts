import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInScenarios } from '../scenario/builtins.js';
import { startTestApp, type TestApp } from '../scenario/test-app.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const SECRET = 'scenario-cli-secret';
let app: TestApp;
let dir: string;

beforeAll(async () => {
  app = await startTestApp(SECRET);
  dir = await mkdtemp(join(tmpdir(), `payhook-scenario-cli-${process.pid}-`));
});

afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

async function cli(args: string[]) {
  const { io, out, err } = memoryIO('', { PAYHOOK_SECRET: SECRET });
  const code = await runCli(['scenario', ...args], io);
  return { code, out, err };
}

describe('payhook scenario', () => {
  it('lists every built-in, one a line with what happens', async () => {
    const { code, out } = await cli(['list']);
    expect(code).toBe(0);
    expect(out.map((line) => line.split(' ')[0])).toEqual(builtInScenarios().map((s) => s.name));
    expect(out).toContain('auth-voided                  An authorization released before capture (void).');
  });

  it('runs a built-in against the app, prints its timeline and exits 0', async () => {
    const { code, out } = await cli(['run', 'three-ds-purchase', '--target', app.target, '--seed', '3']);
    expect(code).toBe(0);
    expect(out.join('\n')).toBe(
      [
        '✔ passed  scenario three-ds-purchase, seed 3',
        '',
        '2026-01-01 09:00:00   1. create order amount=250 card=threeDs',
        '           09:00:00        → #1                 purchase pending (order)       200 handled',
        '           09:00:00   2. threeDs order',
        '           09:00:00        → #2                 purchase success (order)       200 handled',
      ].join('\n'),
    );
  });

  it('exits 1 on a failed expectation, the failure printed first, and writes the run with --report', async () => {
    const file = join(dir, 'replayed.yaml');
    await writeFile(
      file,
      'name: replayed\nsteps:\n  - create: { as: order, amount: 5 }\n  - reconcile: { payment: order }\n    expect:\n      webhooks: [{ event: purchase success, outcome: handled }]\n',
    );
    const report = join(dir, 'run.json');
    const { code, out } = await cli(['run', file, '--target', app.target, '--report', report]);
    expect(code).toBe(1);
    expect(out.slice(0, 2)).toEqual(
      [
        '✘ failed (1)  scenario replayed, seed 1',
        '  ✘ step 2 (webhook): purchase success (webhook #1) answered handled, expected handled',
      ]
        .slice(0, 1)
        .concat(out.slice(1, 2)),
    );
    expect(out[1]).toMatch(
      /^ {2}✘ step 2 \(webhook\): purchase success \(webhook #2\) answered duplicate, expected handled$/,
    );
    const written = JSON.parse(await readFile(report, 'utf8')) as { passed: boolean; timeline: unknown[] };
    expect(written.passed).toBe(false);
    expect(written.timeline.map((entry) => (entry as { type: string }).type)).toEqual([
      'step',
      'delivery',
      'step',
      'delivery',
      'failure',
    ]);
  });

  it('prints the run as JSON with --json', async () => {
    const { code, out } = await cli(['run', 'auth-voided', '--target', app.target, '--json', '--seed', '9']);
    expect(code).toBe(0);
    const run = JSON.parse(out.join('\n')) as { seed: number; passed: boolean; scenario: { name: string } };
    expect([run.seed, run.passed, run.scenario.name]).toEqual([9, true, 'auth-voided']);
  });

  it('refuses a bad file with exit 2, naming the step and the field', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'name: bad\nsteps:\n  - create: { as: order, amount: -1 }\n');
    const { code, err } = await cli(['run', file, '--target', app.target]);
    expect(code).toBe(2);
    expect(err).toEqual([
      `payhook scenario: ${file} is not a valid scenario:`,
      '  steps[0] (create).amount must be a positive amount with at most 2 decimals, not -1',
    ]);
  });

  it.each([
    [['run', 'auth-voided'], 'payhook scenario: --target is required.'],
    [
      ['run', '--target', 'http://127.0.0.1:1/webhooks'],
      'payhook scenario: name the scenario: a file or a built-in name.',
    ],
    [['explode'], 'payhook scenario: unknown action "explode" (run, explore, list).'],
    [[], 'payhook scenario: name an action: run, explore, list.'],
    [
      ['run', 'auth-voided', '--target', 'http://127.0.0.1:1/', '--seed', 'x'],
      'payhook scenario: --seed must be a whole number from 0 to 4294967295, not "x".',
    ],
  ])('answers a usage error for %j', async (args, message) => {
    const { code, err } = await cli(args);
    expect(code).toBe(2);
    expect(err[0]).toBe(message);
  });
});
