/**
 * `pnpm delivery:path`: which of core's source files run for one handled delivery through the Express adapter on
 * MemoryStore, counted from V8's precise coverage of that delivery alone (the app is built and warmed first, so
 * module loading and setup do not count). Issue 32's measure of how many files a reader opens to follow one
 * notification; issue 42 adds the functions' total and, apart, the files of every other @payhook package that ran
 * (the adapter), so nothing is hidden by moving it out of core.
 */
import { once } from 'node:events';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webhookMiddleware } from '@payhook/express';
import express from 'express';
import { purchase } from '../packages/core/test/fixtures.ts';
import { FORM, signedForm } from '../test/support/signed-form.ts';

// Functions the TypeScript loader (tsx, esbuild's keepNames) writes into a module to keep closures' names: not in
// core's source, so not counted (it put `__name` in http/body.ts, run 5 times a delivery, counted as core's).
const LOADER_HELPERS = new Set(['__name']);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'delivery-path-secret';

async function post(port: number, body: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body,
  });
  await response.text();
  return response.status;
}

const app = express();
app.use(webhookMiddleware({ secret: SECRET, path: '/webhooks' }).onAny(() => {}));
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as AddressInfo;
await post(port, signedForm(purchase({ order_id: 'warm-up' }), SECRET));

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
// Signed before the counts are reset: only the delivery itself is measured.
const body = signedForm(purchase({ order_id: 'measured' }), SECRET);
await session.post('Profiler.takePreciseCoverage');
const status = await post(port, body);
const { result } = await session.post('Profiler.takePreciseCoverage');
server.close();

/** Functions that ran, by source file, for each package (`core`, `express`, ...). */
const packages = new Map<string, Map<string, number>>();
for (const script of result) {
  const match = /\/packages\/([^/]+)\/src\//.exec(script.url);
  if (!match) continue;
  const ran = script.functions.filter(
    (fn) => fn.ranges[0]!.startOffset > 0 && fn.ranges[0]!.count > 0 && !LOADER_HELPERS.has(fn.functionName),
  ).length;
  if (ran === 0) continue;
  const files = packages.get(match[1]!) ?? new Map<string, number>();
  files.set(relative(ROOT, fileURLToPath(script.url)), ran);
  packages.set(match[1]!, files);
}

function total(files: Map<string, number>): number {
  let sum = 0;
  for (const count of files.values()) sum += count;
  return sum;
}

const core = packages.get('core') ?? new Map<string, number>();
console.log(`one delivery answered ${status}: ${core.size} core source files ran ${total(core)} functions`);
for (const [file, count] of [...core].sort()) console.log(`  ${file}  ${count} functions`);
for (const [name, files] of [...packages].sort()) {
  if (name === 'core') continue;
  console.log(`@payhook/${name}: ${files.size} source files ran ${total(files)} functions`);
  for (const [file, count] of [...files].sort()) console.log(`  ${file}  ${count} functions`);
}
