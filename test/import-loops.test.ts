import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

// Issue 42's bar: no import loop between the source files of any package, type imports included, so every
// package reads bottom up: shared types sit in leaf files below the files that use them.

const ROOT = join(import.meta.dirname, '..');
const PACKAGES = join(ROOT, 'packages');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every relative specifier of `file` (imports, `import type`, re-exports, `import()`), resolved to its `.ts` source. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolveSource(dirname(file), specifier))
    .filter((target): target is string => target !== undefined);
}

function resolveSource(from: string, specifier: string): string | undefined {
  const path = resolve(from, specifier);
  const candidates = [path.replace(/\.js$/, '.ts'), `${path}.ts`, join(path, 'index.ts'), path];
  return candidates.find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
}

interface Graph {
  /** How many imports between source files were resolved: zero would mean the test saw nothing. */
  edges: number;
  /** Each loop as the files in it (a strongly connected component of more than one file, or a file importing itself). */
  loops: string[][];
}

/** The import graph of the `.ts` sources under `dir`, and its loops (Tarjan's strongly connected components). */
function importGraph(dir: string): Graph {
  const files = sources(dir);
  const known = new Set(files);
  const next = new Map(files.map((file) => [file, importsOf(file).filter((target) => known.has(target))]));
  let edges = 0;
  for (const targets of next.values()) edges += targets.length;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(ROOT, member));
    } while (member !== file);
    if (component.length > 1 || next.get(file)!.includes(file)) loops.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return { edges, loops };
}

const packages = readdirSync(PACKAGES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(PACKAGES, entry.name, 'src')))
  .map((entry) => entry.name);

describe('import loops', () => {
  const graphs = new Map(packages.map((name) => [name, importGraph(join(PACKAGES, name, 'src'))]));

  it('resolves the imports between source files (`.js` specifiers to their `.ts` sources)', () => {
    let edges = 0;
    for (const [name, graph] of graphs) {
      console.log(`packages/${name}/src: ${graph.edges} import edges resolved, ${graph.loops.length} loops`);
      edges += graph.edges;
    }
    console.log(`every package: ${edges} import edges resolved`);
    expect(edges).toBeGreaterThan(0);
    // Core's sources import each other: a resolver that found nothing there would pass any package.
    expect(graphs.get('core')!.edges).toBeGreaterThan(100);
  });

  it.each(packages)('packages/%s/src has none, type imports included', (name) => {
    expect(graphs.get(name)!.loops).toEqual([]);
  });

  describe('a planted loop', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-import-loop-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('is found when it is made of type imports only', () => {
      writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
      writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
      writeFileSync(join(dir, 'c.ts'), "export type { A } from './a.js';\n");
      const { edges, loops } = importGraph(dir);
      expect(edges).toBe(3);
      expect(loops).toEqual([[relative(ROOT, join(dir, 'a.ts')), relative(ROOT, join(dir, 'b.ts'))]]);
    });
  });
});
