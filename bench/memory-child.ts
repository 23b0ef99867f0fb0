// Heap cost of MemoryStore, in a child started with --expose-gc so the heap can be measured after full GCs.
// argv[2]: the bound (maxEntries). Fills the bound three times over and reports the heap after each fill over IPC:
// after the first the store is at its bound; the second brings its Map to the size it keeps under churn; the
// third shows whether it stays there.
import { MemoryStore } from '@payhook/core';
import { createIdSource } from './payload.js';

/** Heap bytes held by the store after each fill of `bound` unique keys. */
export interface MemoryReport {
  bound: number;
  heapAfter: [number, number, number];
  size: number;
}

const bound = Number(process.argv[2]);
const gc = globalThis.gc;
if (!gc || !process.send || !(bound > 0))
  throw new Error('run by the bench runner: --expose-gc, IPC, a bound');

/** The JavaScript heap plus the memory of ArrayBuffers, where typed arrays keep their contents. */
function heap(): number {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

const nextId = createIdSource();
function fill(store: MemoryStore, count: number): void {
  for (let i = 0; i < count; i++) {
    // The shape of the default key (notificationKey): operation id, method, status, status code.
    const key = `${nextId()}:purchase:success:1000`;
    const claim = store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error(`key ${i} was not claimable: ${claim.status}`);
    store.commit(key, claim.token, 604_800_000);
  }
}

const base = heap();
const store = new MemoryStore({ maxEntries: bound });
const heapAfter: number[] = [];
for (let pass = 0; pass < 3; pass++) {
  fill(store, bound);
  heapAfter.push(heap() - base);
}
const report: MemoryReport = { bound, heapAfter: heapAfter as MemoryReport['heapAfter'], size: store.size };
process.send(report, () => process.exit(0));
