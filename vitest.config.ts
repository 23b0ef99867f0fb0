import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));
const nest11 = fileURLToPath(new URL('./test/nest11/node_modules/@nestjs/', import.meta.url));
const NESTJS_TESTS = ['packages/nestjs/src/**/*.test.ts', 'packages/nestjs/test/**/*.test.ts'];

// Unit tests run against the sources; tests that start child processes (examples, CLI) use the built dist.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@payhook\/core\/(redis|postgres|memory)$/, replacement: src('core/src/stores/$1.ts') },
      { find: /^@payhook\/testing\/nock$/, replacement: src('testing/src/nock.ts') },
      { find: /^@payhook\/(core|express|koa|nestjs|testing)$/, replacement: src('$1/src/index.ts') },
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
    projects: [
      // Everything, @payhook/nestjs on NestJS 12 (its devDependencies).
      { extends: true, test: { name: 'payhook' } },
      // @payhook/nestjs's tests again on NestJS 11: test/nest11 installs it where Nest 11's packages resolve each
      // other; the sources under test (adapter and tests) import it through this alias.
      {
        extends: true,
        resolve: {
          alias: [
            {
              find: /^@nestjs\/(common|core|config|platform-express|platform-fastify|testing)(\/.*)?$/,
              replacement: `${nest11}$1$2`,
            },
          ],
        },
        test: { name: 'nestjs 11', include: NESTJS_TESTS },
      },
    ],
  },
});
