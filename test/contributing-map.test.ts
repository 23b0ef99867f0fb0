import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const CORE = join(ROOT, 'packages/core/src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(CORE, path)] : [];
  });
}

/** The files CONTRIBUTING.md's table "Which file decides what" names, as paths under packages/core/src. */
function mapped(markdown: string): string[] {
  const start = markdown.indexOf('### Which file decides what (packages/core/src)');
  const end = markdown.indexOf('\n### ', start + 1);
  const table = markdown
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  return table.flatMap((row) => [...row.matchAll(/`([\w/.-]+\.ts)`/g)].map((match) => match[1] as string));
}

describe("CONTRIBUTING.md's map of core", () => {
  const named = mapped(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'));

  it('names every source file of packages/core/src', () => {
    expect(sources(CORE).filter((file) => !named.includes(file))).toEqual([]);
  });

  it('names no file that is not there', () => {
    const present = new Set(sources(CORE));
    expect(named.filter((file) => !present.has(file))).toEqual([]);
  });
});
