import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { vi } from 'vitest';

/**
 * Imports modules afresh (`load`) while `process.getBuiltinModule` is `getBuiltinModule`: `undefined` loads them as
 * workerd without `nodejs_compat` and Node.js before 20.16 do, with no `node:` module at all. Core resolves its
 * builtins once, as its modules load, so what `load` returns keeps them after the original is back.
 */
export async function importWithBuiltins<T>(
  getBuiltinModule: ((id: string) => unknown) | undefined,
  load: () => Promise<T>,
): Promise<T> {
  const original = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
  Object.defineProperty(process, 'getBuiltinModule', {
    value: getBuiltinModule,
    configurable: true,
    writable: true,
  });
  vi.resetModules();
  try {
    return await load();
  } finally {
    if (original) Object.defineProperty(process, 'getBuiltinModule', original);
    else Reflect.deleteProperty(process, 'getBuiltinModule');
    vi.resetModules();
  }
}

/**
 * The `node:` modules a file under `src` and every file it imports (not only for types) import, statically: none may
 * be left on a main entry's path, where Node.js (and so the calling test file's other tests) would load them anyway.
 */
export function staticNodeImports(src: string, entry: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, type, specifier] of text.matchAll(
      /^(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+'([^']+)'/gms,
    )) {
      if (type || !specifier) continue;
      if (specifier.startsWith('node:')) found.push(`${file.slice(src.length + 1)}: ${specifier}`);
      else if (specifier.startsWith('.')) visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(src, entry));
  return found;
}
