import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The packages the rows import, each measured as its build (dist), as a merchant installs it. */
// core first: the others' builds read its types; relay before testing, whose CLI (`payhook relay`) loads it.
const PACKAGES = ['core', 'express', 'koa', 'opentelemetry', 'payments', 'queue', 'relay', 'testing'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
      newest = Math.max(newest, statSync(path).mtimeMs);
    }
  }
  return newest;
}

function builtAt(pkg: string): number {
  try {
    return statSync(join(ROOT, 'packages', pkg, 'dist', 'index.js')).mtimeMs;
  } catch {
    return 0;
  }
}

/** Builds the measured packages whose sources changed since their last build (a fresh clone builds all of them). */
export function ensureBuilt(log: (line: string) => void): void {
  const stale = PACKAGES.filter((pkg) => builtAt(pkg) < newestSource(join(ROOT, 'packages', pkg, 'src')));
  for (const pkg of stale) {
    log(`building @payhook/${pkg} (its sources are newer than its dist)`);
    execFileSync('npx', ['-y', 'pnpm@10', '--filter', `@payhook/${pkg}`, 'run', 'build'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}
