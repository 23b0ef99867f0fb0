import type * as NodeBufferModule from 'node:buffer';
import type * as NodeCryptoModule from 'node:crypto';

/**
 * A `node:` module through `process.getBuiltinModule` (Node.js 20.16+ and 22.3+, Bun, Deno, workerd with
 * `nodejs_compat`), or `undefined` where the runtime has none (workerd without `nodejs_compat`, Node.js before
 * 20.16). Not a static `import`, so core loads on every runtime; not a dynamic `import()` either: bundlers for
 * Workers (wrangler, miniflare) refuse one whose specifier is not a literal, and a literal one fails to resolve
 * without `nodejs_compat`.
 */
export function builtinModule<T>(id: string): T | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== 'function') return undefined;
  try {
    return (runtime.getBuiltinModule(id) as T | undefined) ?? undefined;
  } catch {
    // A runtime whose getBuiltinModule lacks it.
    return undefined;
  }
}

/** `node:crypto`, or `undefined`: then core hashes with sha.ts. */
export const nodeCrypto = builtinModule<typeof NodeCryptoModule>('node:crypto');

/** `node:buffer`, or `undefined`: then core works on plain `Uint8Array`s with `TextEncoder` and `TextDecoder`. */
export const nodeBuffer = builtinModule<typeof NodeBufferModule>('node:buffer');
