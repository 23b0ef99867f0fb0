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
});
