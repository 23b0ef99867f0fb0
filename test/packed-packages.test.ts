import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPackages, packPackages } from '../scripts/check-packages.ts';

/** The targets of a markdown text's links and images: inline, reference definitions and HTML attributes. */
function linkTargets(markdown: string): string[] {
  const inline = [...markdown.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...markdown.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  const html = [...markdown.matchAll(/\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
  return [...inline, ...references, ...html];
}

/** A link that leaves the page: a URL with a scheme (https:, mailto:), or one starting with `//`. */
function isAbsolute(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** Relative links (anchors dropped) that do not name a file or folder of the unpacked package in `root`. */
function brokenLinks(markdown: string, root: string): string[] {
  return linkTargets(markdown)
    .filter((target) => !isAbsolute(target) && !target.startsWith('#'))
    .filter((target) => {
      const path = normalize(decodeURI(target.split('#', 1)[0]!.split('?', 1)[0]!));
      return path.startsWith('..') || path.startsWith('/') || !existsSync(join(root, path));
    });
}

describe('linkTargets', () => {
  it('finds inline links and images, reference definitions and HTML attributes', () => {
    const text = '[a](../x.md) ![b](img/c.png "t") [c](<d.md>)\n[ref]: ./f.md\n<img src="g.svg"> [h](#top)';
    expect(linkTargets(text)).toEqual(['../x.md', 'img/c.png', 'd.md', '#top', './f.md', 'g.svg']);
  });
});

describe('brokenLinks', () => {
  it('names relative links that leave the package or name a missing file, and passes absolute ones', () => {
    const root = join(import.meta.dirname, '..', 'packages', 'core');
    const text = '[a](README.md#x) [b](../../docs/errors.md) [c](missing.md) [d](https://e.org/f) [g](#h)';
    expect(brokenLinks(text, root)).toEqual(['../../docs/errors.md', 'missing.md']);
  });
});

// What npm's page and node_modules show is the tarball: README links must work there, and the package page needs
// the repository, homepage and issue tracker.
describe('the packed packages, as npm publishes them', () => {
  const unpacked = new Map<string, string>();
  let destination = '';

  beforeAll(() => {
    destination = mkdtempSync(join(tmpdir(), 'payhook-packed-'));
    for (const [name, tarball] of packPackages(destination)) {
      const root = join(destination, name.replace('/', '+'));
      execFileSync('mkdir', ['-p', root]);
      execFileSync('tar', ['-xzf', tarball, '-C', root, '--strip-components=1']);
      unpacked.set(name, root);
    }
  }, 120_000);

  afterAll(() => rmSync(destination, { recursive: true, force: true }));

  it('packs every publishable package', () => {
    expect([...unpacked.keys()]).toEqual(listPackages().map((pkg) => pkg.name));
  });

  it.each(listPackages().map((pkg) => [pkg.name]))(
    '%s: every relative link in its README names a file in the tarball',
    (name) => {
      const root = unpacked.get(name)!;
      const readme = readFileSync(join(root, 'README.md'), 'utf8');
      expect(brokenLinks(readme, root)).toEqual([]);
    },
  );

  it.each(listPackages().map((pkg) => [pkg.name]))(
    '%s: has repository (with its directory), homepage and bugs',
    (name) => {
      const root = unpacked.get(name)!;
      const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      const directory = `packages/${name.split('/')[1]}`;
      expect(manifest.repository).toEqual({
        type: 'git',
        url: 'git+https://github.com/payhook/payhook.git',
        directory,
      });
      expect(manifest.homepage).toBe(`https://github.com/payhook/payhook/tree/main/${directory}#readme`);
      expect(manifest.bugs).toEqual({ url: 'https://github.com/payhook/payhook/issues' });
      expect(existsSync(join(import.meta.dirname, '..', directory, 'package.json'))).toBe(true);
    },
  );
});
