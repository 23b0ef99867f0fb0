import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as core from '../packages/core/src/index.ts';

const ROOT = join(import.meta.dirname, '..');
const PACKAGES = join(ROOT, 'packages');
/** Issue 32's bar: the main entry is what a merchant reads (diagnostics, capture and byte helpers are on subpaths). */
const MAX_MAIN_VALUES = 25;

/** Issue 22's bar: a reader follows one notification through core without a function longer than a screen. */
const MAX_LINES = 60;
/** Issue 32's bar, in every package: a source file holds one concern a reader takes in at once. */
const MAX_FILE_LINES = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The sources of every package (its src folder), tests excluded. */
function packageSources(): string[] {
  return readdirSync(PACKAGES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => sources(join(PACKAGES, entry.name, 'src')));
}

/** Every function, method, accessor and constructor in `text` with its length in lines. */
function functionLengths(file: string, text: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const line = (position: number) => source.getLineAndCharacterOfPosition(position).line;
      const named = (node as { name?: ts.Node }).name;
      const at = line(node.getStart(source)) + 1;
      found.push({
        name: `${relative(ROOT, file)}:${at} ${named ? named.getText(source) : ts.SyntaxKind[node.kind]}`,
        lines: line(node.getEnd()) - line(node.getStart(source)) + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the shape of every package', () => {
  it(`has no function over ${MAX_LINES} lines`, () => {
    const long = packageSources()
      .flatMap((file) => functionLengths(file, readFileSync(file, 'utf8')))
      .filter((fn) => fn.lines > MAX_LINES)
      .map((fn) => `${fn.name} (${fn.lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`has no source file over ${MAX_FILE_LINES} lines`, () => {
    const long = packageSources()
      .map((file) => ({
        file: relative(ROOT, file),
        lines: readFileSync(file, 'utf8').trimEnd().split('\n').length,
      }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ file, lines }) => `${file} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it('scans every package', () => {
    const scanned = new Set(packageSources().map((file) => relative(PACKAGES, file).split('/')[0]));
    expect([...scanned]).toEqual(
      expect.arrayContaining(['core', 'express', 'opentelemetry', 'queue', 'testing']),
    );
  });

  it('measures a function from its first line to its last', () => {
    const body = Array.from({ length: 61 }, (_, i) => `  const a${i} = ${i};`).join('\n');
    expect(functionLengths('x.ts', `function long() {\n${body}\n}\nconst short = () => 1;`)).toEqual([
      { name: 'x.ts:1 long', lines: 63 },
      { name: 'x.ts:64 ArrowFunction', lines: 1 },
    ]);
  });
});

describe('the shape of @payhook/core', () => {
  it(`exports at most ${MAX_MAIN_VALUES} values from its main entry`, () => {
    expect(Object.keys(core).length).toBeLessThanOrEqual(MAX_MAIN_VALUES);
    for (const moved of [
      'PAYHOOK_CHANNELS',
      'createCapture',
      'DEFAULT_MASKED_FIELDS',
      'encodeBase64Url',
      'decodeBase64Url',
    ]) {
      expect(Object.keys(core), moved).not.toContain(moved);
    }
  });
});
