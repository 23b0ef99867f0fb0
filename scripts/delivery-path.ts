/**
 * `pnpm delivery:path`: which of core's source files run for one handled delivery through the Express adapter on
 * MemoryStore, counted from V8's precise coverage of that delivery alone (the app is built and warmed first, so
 * module loading and setup do not count). Issue 32's measure of how many files a reader opens to follow one
 * notification.
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
await session.post('Profiler.takePreciseCoverage');
const status = await post(port, signedForm(purchase({ order_id: 'measured' }), SECRET));
const { result } = await session.post('Profiler.takePreciseCoverage');
server.close();

const files = new Map<string, number>();
for (const script of result) {
  if (!script.url.includes('/packages/core/src/')) continue;
  const ran = script.functions.filter(
    (fn) => fn.ranges[0]!.startOffset > 0 && fn.ranges[0]!.count > 0,
  ).length;
  if (ran > 0) files.set(relative(ROOT, fileURLToPath(script.url)), ran);
}
console.log(`one delivery answered ${status}: ${files.size} core source files ran a function`);
for (const [file, count] of [...files].sort()) console.log(`  ${file}  ${count} functions`);
