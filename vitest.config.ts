import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));

// Unit tests run against the sources; tests that start child processes (examples, CLI) use the built dist.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@payhook\/core\/(redis|postgres|memory)$/, replacement: src('core/src/stores/$1.ts') },
      { find: /^@payhook\/testing\/nock$/, replacement: src('testing/src/nock.ts') },
      { find: /^@payhook\/(core|express|fastify|koa|testing)$/, replacement: src('$1/src/index.ts') },
    ],
  },
  test: {
    // Under CI a JSON report too, from which .ci/run prints one plain 'N passed, N failed' line.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: 'node_modules/.vitest/results.json' }]]
      : ['default'],
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'test/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
