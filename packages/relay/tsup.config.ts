import { unlink } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: [
    'src/index.ts',
    'src/file.ts',
    'src/postgres.ts',
    'src/redis.ts',
    'src/node.ts',
    'src/client.ts',
    'src/bin.ts',
  ],
  format: ['esm', 'cjs'],
  dts: {
    entry: ['src/index.ts', 'src/file.ts', 'src/postgres.ts', 'src/redis.ts', 'src/node.ts', 'src/client.ts'],
  },
  clean: true,
  target: 'node20',
  removeNodeProtocol: false,
  // The bin runs as ESM only (bin/payhook-relay.js imports dist/bin.js): its CJS copy would ship unreferenced.
  onSuccess: () => unlink('dist/bin.cjs'),
});
