#!/usr/bin/env node
// The `payhook-relay` command. A committed file rather than dist/bin.js itself, so that `pnpm install` in a fresh
// clone (before any build) can link the bin; the server is loaded from dist when the command runs.
const bin = new URL('../dist/bin.js', import.meta.url);
try {
  await import(bin.href);
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && error.url === bin.href) {
    console.error('payhook-relay: dist/bin.js is missing; build the package first (pnpm build).');
    process.exit(1);
  }
  throw error;
}
