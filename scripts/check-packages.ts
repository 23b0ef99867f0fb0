/**
 * `pnpm check:packages`: packs every publishable package with pnpm (so `workspace:^` becomes a real range, as on
 * publish) and lints each tarball with `publint --strict` and `attw` (the tarball `attw --pack` would build).
 * Exits non-zero when any package has a problem. Needs the packages built (`pnpm build`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT: string = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface WorkspacePackage {
  name: string;
  version: string;
  dir: string;
}

/** The publishable packages under `packages/`, in a stable order. */
export function listPackages(): WorkspacePackage[] {
  const base = join(ROOT, 'packages');
  return readdirSync(base)
    .sort()
    .map((entry) => join(base, entry))
    .filter((dir) => {
      try {
        return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private !== true;
      } catch {
        return false;
      }
    })
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      return { name: manifest.name as string, version: manifest.version as string, dir };
    });
}

/** How to call pnpm 10 here: the one on PATH when it is 10, else through npx. */
export function pnpmCommand(): [string, string[]] {
  const probe = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0 && probe.stdout.trim().startsWith('10.')) return ['pnpm', []];
  return ['npx', ['-y', 'pnpm@10']];
}

/**
 * Packs every package (or those named in `only`) into `destination` with `pnpm pack`; returns the tarball path per
 * package name.
 */
export function packPackages(destination: string, only?: readonly string[]): Map<string, string> {
  const [pnpm, prefix] = pnpmCommand();
  const tarballs = new Map<string, string>();
  for (const pkg of listPackages()) {
    if (only && !only.includes(pkg.name)) continue;
    const output = execFileSync(pnpm, [...prefix, 'pack', '--pack-destination', destination], {
      cwd: pkg.dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const tarball = output
      .trim()
      .split('\n')
      .map((line) => line.trim())
      .reverse()
      .find((line) => line.endsWith('.tgz'));
    if (!tarball) throw new Error(`pnpm pack printed no tarball for ${pkg.name}:\n${output}`);
    tarballs.set(pkg.name, tarball);
  }
  return tarballs;
}

function run(command: string, args: string[]): boolean {
  const bin = join(ROOT, 'node_modules', '.bin', command);
  const result = spawnSync(bin, args, {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  return result.status === 0;
}

function main(): void {
  const destination = mkdtempSync(join(tmpdir(), 'payhook-check-'));
  const failed: string[] = [];
  try {
    for (const [name, tarball] of packPackages(destination)) {
      if (!run('publint', ['run', '--strict', tarball])) failed.push(`${name}: publint --strict`);
      if (!run('attw', ['--format', 'ascii', '--no-emoji', tarball])) failed.push(`${name}: attw`);
    }
  } finally {
    rmSync(destination, { recursive: true, force: true });
  }
  if (failed.length > 0) {
    console.error(`\ncheck:packages failed:\n${failed.map((line) => `  - ${line}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`\ncheck:packages: ${listPackages().length} packages pass publint --strict and attw`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
