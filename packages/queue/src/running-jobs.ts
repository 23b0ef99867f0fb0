/** A job a consumer is running, at its slot in the consumer's `RunningJobs` (-1 once out of it). */
export interface Slotted {
  slot: number;
}

/**
 * The jobs a consumer is running, each at its slot. Not a Set or a Map: V8 links each table a Set or Map outgrows
 * (or compacts after deletions) to the next, so once a long-lived one is in the old generation, a job added and
 * deleted per run keeps every table since, and the jobs they held, alive through young collections into the old
 * generation until the next full one. An array, its last entry moved into a freed slot, keeps no such link.
 */
export class RunningJobs<T extends Slotted> {
  readonly #jobs: T[] = [];

  get size(): number {
    return this.#jobs.length;
  }

  add(job: T): void {
    job.slot = this.#jobs.push(job) - 1;
  }

  /** Takes `job` out (the last one takes its slot); `false` when it was not in. */
  delete(job: T): boolean {
    const { slot } = job;
    if (slot === -1 || this.#jobs[slot] !== job) return false;
    const last = this.#jobs.pop()!;
    if (last !== job) {
      this.#jobs[slot] = last;
      last.slot = slot;
    }
    job.slot = -1;
    return true;
  }

  /** The jobs now, as kept: copy it to take any out while walking it. */
  values(): readonly T[] {
    return this.#jobs;
  }
}
