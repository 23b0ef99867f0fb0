import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nextMessage } from './child.js';
import type { MemoryReport } from './memory-child.js';

/** MemoryStore's heap cost at one bound: per entry at the bound and under churn, and whether it stays flat. */
export interface MemoryRow {
  name: string;
  bound: number;
  /** Heap bytes per entry right after the first `bound` keys. */
  bytesAtBound: number;
  /** Heap bytes per entry after 2x the bound: the size its Map keeps under churn. */
  bytesAfterTwice: number;
  /** Heap after 3x the bound over heap after 2x: 1.00 is flat. */
  growthAfterBound: number;
}

const CHILD = fileURLToPath(new URL('./memory-child.ts', import.meta.url));

/** Measures MemoryStore at each bound in a fresh child with --expose-gc, one child per bound. */
export async function runMemory(bounds: readonly number[]): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  for (const bound of bounds) {
    const child = fork(CHILD, [String(bound)], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const report = await nextMessage<MemoryReport>(child, `MemoryStore at ${bound}`);
    if (report.size !== bound)
      throw new Error(`MemoryStore held ${report.size} keys, not its bound ${bound}`);
    const [first, second, third] = report.heapAfter;
    rows.push({
      name: `MemoryStore at ${bound.toLocaleString('en-US')} entries`,
      bound,
      bytesAtBound: first / bound,
      bytesAfterTwice: second / bound,
      growthAfterBound: third / second,
    });
  }
  return rows;
}
