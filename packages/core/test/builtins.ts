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
