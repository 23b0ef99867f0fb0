import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/nock.ts', 'src/cli.ts'],
  format: ['esm', 'cjs'],
  dts: { entry: ['src/index.ts', 'src/nock.ts'] },
  clean: true,
  target: 'node20',
});
