import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { listPackages } from '../scripts/check-packages.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const work = mkdtempSync(join(tmpdir(), 'payhook-changesets-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Status {
  changesets: { id: string; releases: { name: string; type: string }[] }[];
  releases: { name: string; type: string; oldVersion: string; newVersion: string }[];
}

describe('changesets', () => {
  it('reads its config from changeset.config.json through the .changeset/config.json symlink', () => {
    const link = join(ROOT, '.changeset', 'config.json');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe('../changeset.config.json');
    const config = JSON.parse(readFileSync(link, 'utf8'));
    expect(config).toMatchObject({ access: 'public', baseBranch: 'main', commit: false });
  });

  it('versions every publishable package together (one fixed group naming them all)', () => {
    const config = JSON.parse(readFileSync(join(ROOT, 'changeset.config.json'), 'utf8')) as {
      fixed: string[][];
    };
    expect(config.fixed).toHaveLength(1);
    expect([...config.fixed[0]!].sort()).toEqual(
      listPackages()
        .map((pkg) => pkg.name)
        .sort(),
    );
  });

  it('`changeset status` succeeds and every pending release names a workspace package', () => {
    const output = join(work, 'status.json');
    const result = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'changeset'),
      ['status', `--output=${output}`],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
    const status = JSON.parse(readFileSync(output, 'utf8')) as Status;
    const packages = listPackages();
    const names = new Set(packages.map((pkg) => pkg.name));
    for (const changeset of status.changesets) {
      for (const release of changeset.releases) expect(names.has(release.name)).toBe(true);
    }
    // A package never released (0.0.0) must carry a changeset, so its first CHANGELOG.md has an entry.
    const pending = new Set(status.releases.map((release) => release.name));
    for (const pkg of packages.filter((p) => p.version === '0.0.0')) expect(pending.has(pkg.name)).toBe(true);
  });
});
