/**
 * `pnpm check:api`: API Extractor's report of every entry point of every package (`packages/<pkg>/etc/*.api.md`,
 * one per `exports` subpath), compared with the committed one; fails when the public surface changed without
 * its report, so every change of the surface shows in review. `pnpm api:update` builds and rewrites the reports.
 * Reads the built `.d.ts` files: needs `pnpm build`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';
import { listPackages, ROOT } from './check-packages.ts';

interface EntryPoint {
  /** The package's directory. */
  dir: string;
  /** The subpath, `.` for the main entry. */
  subpath: string;
  /** The ESM `.d.ts` of the subpath. */
  types: string;
  /** The report's name: `core`, `core-adapter`, `testing-nock`. */
  report: string;
}

const REPORT_MESSAGES = new Set<string>([
  'console-api-report-not-copied',
  'console-api-report-copied',
  'console-api-report-created',
  'console-preamble',
]);

type Conditions = { import?: { types?: string } };

/** Every typed subpath of every publishable package, from its `exports` map. */
export function entryPoints(): EntryPoint[] {
  return listPackages().flatMap((pkg) => {
    const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8'));
    const base = pkg.name.replace(/^@payhook\//, '');
    return Object.entries(manifest.exports as Record<string, Conditions | string>).flatMap(
      ([subpath, target]) => {
        const types = typeof target === 'string' ? undefined : target.import?.types;
        if (!types) return [];
        const report = subpath === '.' ? base : `${base}-${subpath.replace(/^\.\//, '').replace(/\//g, '-')}`;
        return [{ dir: pkg.dir, subpath, types: join(pkg.dir, types), report }];
      },
    );
  });
}

const LOCATION = /^\/\/ dist\/\S+:\d+:\d+ - /;

/**
 * The report without what only the build's layout decides: API Extractor's warnings name a `.d.ts` chunk
 * (`dist/dedupe-C_Y0MEpc.d.ts:32:5`) whose name and lines change when a source file moves though no API did.
 * The location is dropped and the warnings sorted, so the report changes only with the public surface.
 */
export function normalizeReport(report: string): string {
  const lines = report.split('\n');
  const warnings = lines.filter((line) => LOCATION.test(line)).map((line) => line.replace(LOCATION, '// '));
  const first = lines.findIndex((line) => LOCATION.test(line));
  if (first === -1) return report;
  const rest = lines.filter((line) => !LOCATION.test(line));
  rest.splice(first, 0, ...[...new Set(warnings)].sort());
  return rest.join('\n');
}

/** Runs API Extractor on one entry point; true when its report is unchanged (or was rewritten with `update`). */
function extract(entry: EntryPoint, update: boolean, temp: string): boolean {
  const reportFolder = join(temp, entry.report);
  mkdirSync(reportFolder, { recursive: true });
  const config = ExtractorConfig.prepare({
    configObjectFullPath: undefined,
    packageJsonFullPath: join(entry.dir, 'package.json'),
    configObject: {
      projectFolder: entry.dir,
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            lib: ['ES2023', 'DOM'],
            strict: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.report,
        reportFolder,
        reportTempFolder: temp,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
          // Release tags (@public, @beta) are not used: what an entry exports is public.
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // A type declared in a shared chunk and exported by another entry point (the main one) is noted in
          // the report, not an error: tsup's chunks are not entry points API Extractor can see.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      },
    },
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    showVerboseMessages: false,
    messageCallback: (message) => {
      // API Extractor's own lines about the report (with a temp path) are replaced by the one line below.
      if (REPORT_MESSAGES.has(message.messageId)) message.handled = true;
    },
  });
  const committed = join(entry.dir, 'etc', `${entry.report}.api.md`);
  const file = relative(ROOT, committed);
  const report = normalizeReport(readFileSync(join(reportFolder, `${entry.report}.api.md`), 'utf8'));
  const changed = !existsSync(committed) || readFileSync(committed, 'utf8') !== report;
  if (changed && update) {
    mkdirSync(join(entry.dir, 'etc'), { recursive: true });
    writeFileSync(committed, report);
  }
  if (changed) {
    console.log(
      update
        ? `api: ${file} rewritten (${entry.subpath})`
        : `api: ${file} is out of date: the public surface of ${entry.subpath} changed. Review the change, then run \`pnpm api:update\` and commit the report.`,
    );
  }
  return result.succeeded && (update || !changed);
}

function main(): void {
  const { values } = parseArgs({ options: { update: { type: 'boolean', default: false } } });
  const temp = mkdtempSync(join(tmpdir(), 'payhook-api-'));
  const failed: string[] = [];
  const entries = entryPoints();
  try {
    for (const entry of entries) if (!extract(entry, values.update, temp)) failed.push(entry.report);
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  if (failed.length > 0) {
    console.error(`\ncheck:api failed for: ${failed.join(', ')}`);
    process.exit(1);
  }
  console.log(
    `\ncheck:api: ${entries.length} API reports ${values.update ? 'written' : 'match the built packages'}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
