import { describe, expect, it } from 'vitest';
import { normalizeReport } from '../scripts/api-report.ts';

describe('the API reports', () => {
  it('name no build chunk, so moving a source file changes no report', () => {
    const before = [
      'export function f(): void;',
      '',
      '// Warnings were encountered during analysis:',
      '//',
      '// dist/handler-B98P9KVS.d.ts:44:5 - (ae-undocumented) Missing documentation for "code".',
      '// dist/dedupe-C_Y0MEpc.d.ts:32:5 - (ae-undocumented) Missing documentation for "claim".',
      '',
    ].join('\n');
    const moved = before
      .replace('dist/handler-B98P9KVS.d.ts:44:5', 'dist/errors-Zx81QQab.d.ts:12:3')
      .replace('dist/dedupe-C_Y0MEpc.d.ts:32:5', 'dist/stores/contract-Aa00.d.ts:9:5');
    expect(normalizeReport(moved)).toBe(normalizeReport(before));
    expect(normalizeReport(before).split('\n').slice(4, 6)).toEqual([
      '// (ae-undocumented) Missing documentation for "claim".',
      '// (ae-undocumented) Missing documentation for "code".',
    ]);
  });
});
