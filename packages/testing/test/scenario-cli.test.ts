import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../src/scenario/test-app.js';
import { assertBuilt, runCli } from './run-cli.js';

const SECRET = 'scenario-child-secret';
let app: TestApp;

beforeAll(async () => {
  assertBuilt();
  app = await startTestApp(SECRET);
});

afterAll(() => app.close());

describe('the built payhook scenario', () => {
  it('finds the built-in scenarios shipped beside dist/', async () => {
    const listed = await runCli(['scenario', 'list', '--json']);
    expect(listed.code).toBe(0);
    const names = listed.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { name: string }).name);
    expect(names).toContain('subscription-three-charges');
    expect(names.length).toBeGreaterThanOrEqual(8);
  });

  it('runs one against an app over HTTP, the secret from PAYHOOK_SECRET', async () => {
    const run = await runCli(['scenario', 'run', 'purchase-two-refunds', '--target', app.target], {
      env: { PAYHOOK_SECRET: SECRET },
    });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout.split('\n')[0]).toBe('✔ passed  scenario purchase-two-refunds, seed 1');
  });

  it('explores one with drawn faults against an app over HTTP', async () => {
    const explored = await runCli(
      ['scenario', 'explore', 'direct-purchase', '--target', app.target, '--runs', '20'],
      {
        env: { PAYHOOK_SECRET: SECRET },
      },
    );
    expect([explored.code, explored.stderr]).toEqual([0, '']);
    expect(explored.stdout.trim()).toBe('✔ 20 runs of direct-purchase with seed 1: every run passed.');
  });
});
