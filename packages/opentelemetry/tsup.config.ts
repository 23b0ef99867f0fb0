import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  // The instrumentation reports the version it was released as (`instrumentationVersion`, the tracer's version).
  define: { __PAYHOOK_OTEL_VERSION__: JSON.stringify(version) },
  removeNodeProtocol: false,
});
