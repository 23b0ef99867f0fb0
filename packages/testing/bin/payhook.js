#!/usr/bin/env node
// The `payhook` command. A committed file rather than dist/cli.js itself, so that `pnpm install` in a fresh clone
// of the repository (before any build) can link the bin; the CLI is loaded from dist when the command runs.
const cli = new URL('../dist/cli.js', import.meta.url);
try {
  await import(cli.href);
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && error.url === cli.href) {
    console.error('payhook: dist/cli.js is missing; build the package first (pnpm build).');
    process.exit(1);
  }
  throw error;
}
