import { unlink } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/fake.ts', 'src/nock.ts', 'src/cli.ts'],
  format: ['esm', 'cjs'],
  dts: { entry: ['src/index.ts', 'src/fake.ts', 'src/nock.ts'] },
  clean: true,
  target: 'node20',
  // The CLI runs as ESM only (bin/payhook.js imports dist/cli.js): its CJS copy would ship unreferenced.
  onSuccess: () => unlink('dist/cli.cjs'),
});
