import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from './run-cli.js';

const FILE = fileURLToPath(new URL('./node-test/harness.mjs', import.meta.url));

function nodeTest(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', FILE], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the harness under node:test', () => {
  beforeAll(assertBuilt);

  it('passes all three node:test tests on the built dist, without vitest globals', async () => {
    const { code, output } = await nodeTest();
    expect(output).toMatch(/^# pass 3$/m);
    expect(output).toMatch(/^# fail 0$/m);
    expect(code).toBe(0);
  });
});
