import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    adapter: 'src/adapter.ts',
    capture: 'src/capture.ts',
    diagnostics: 'src/diagnostics/index.ts',
    'stores/redis': 'src/stores/redis.ts',
    'stores/postgres': 'src/stores/postgres.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // Shared chunks in both formats: the entries share one copy of the handler and of the error classes, so
  // `instanceof WebhookError` holds across `@payhook/core` and its subpaths under `require` too.
  splitting: true,
  clean: true,
  target: 'node20',
  // Imports keep their `node:` prefix, which Deno and bundlers for Cloudflare Workers (nodejs_compat) take as built-in.
  removeNodeProtocol: false,
});
