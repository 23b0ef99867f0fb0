import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const quickStart = (text: string) =>
  /<!-- quick start: begin -->[\s\S]*?<!-- quick start: end -->/.exec(text)?.[0];

describe('root README', () => {
  it('shows the Express example quick start verbatim', () => {
    const fromExample = quickStart(read('examples/express/README.md'));
    expect(fromExample).toBeDefined();
    expect(quickStart(read('README.md'))).toBe(fromExample);
  });

  it('gives a fresh machine exactly the two commands, and .ci/run runs the test one verbatim', () => {
    const readme = read('README.md');
    const demo = 'npx -y pnpm@10 install && npx -y pnpm@10 demo';
    const test = 'npx -y pnpm@10 install && npx -y pnpm@10 test';
    expect(readme).toContain(`\n${demo}\n`);
    expect(readme).toContain(`\n${test}\n`);
    expect(read('.ci/run').split('\n')).toContain(test);
  });
});
