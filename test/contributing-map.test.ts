import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function sources(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(root, path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

/** The files CONTRIBUTING.md's table "Which file decides what (<src>)" names, as paths under that folder. */
function mapped(markdown: string, src: string): string[] {
  const start = markdown.indexOf(`### Which file decides what (${src})`);
  if (start < 0) throw new Error(`CONTRIBUTING.md has no map of ${src}`);
  const end = markdown.indexOf('\n### ', start + 1);
  const table = markdown
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  return table.flatMap((row) => [...row.matchAll(/`([\w/.-]+\.ts)`/g)].map((match) => match[1] as string));
}

describe.each(['packages/core/src', 'packages/payments/src'])("CONTRIBUTING.md's map of %s", (src) => {
  const named = mapped(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'), src);

  it('names every source file', () => {
    expect(sources(join(ROOT, src)).filter((file) => !named.includes(file))).toEqual([]);
  });

  it('names no file that is not there', () => {
    const present = new Set(sources(join(ROOT, src)));
    expect(named.filter((file) => !present.has(file))).toEqual([]);
  });
});
