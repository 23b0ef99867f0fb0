import { unlink } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/fake.ts', 'src/nock.ts', 'src/scenario.ts', 'src/cli.ts'],
  format: ['esm', 'cjs'],
  dts: { entry: ['src/index.ts', 'src/fake.ts', 'src/nock.ts', 'src/scenario.ts'] },
  clean: true,
  target: 'node20',
  // import.meta.url in the CJS build too: the built-in scenarios are read from the package's scenarios/ folder.
  shims: true,
  // The CLI runs as ESM only (bin/payhook.js imports dist/cli.js): its CJS copy would ship unreferenced.
  onSuccess: () => unlink('dist/cli.cjs'),
});
