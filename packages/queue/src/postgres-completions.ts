interface Held {
  readonly id: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * The completions of settled jobs, written one statement at a time: those settling while one is being written go
 * together in the next, as soon as it ends. While `hold()`ed (the consumer waiting for its next fetch) and none is
 * being written, they wait for `write()`, so the jobs settled since the last fetch are completed in one statement
 * beside the next one. When a statement fails, every job of it fails with its error.
 */
export class Completions {
  readonly #complete: (ids: string[]) => Promise<unknown>;
  readonly #max: number;
  #held: Held[] = [];
  #holding = false;
  #writing = false;

  constructor(complete: (ids: string[]) => Promise<unknown>, max: number) {
    this.#complete = complete;
    this.#max = max;
  }

  /** Completes the job `id`: at once unless held or a statement is under way, else with the others. */
  add(id: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#held.push({ id, resolve, reject });
      if (!this.#holding) this.#next();
    });
  }

  /** Keeps the completions of jobs settling from now on until `write()`. */
  hold(): void {
    this.#holding = true;
  }

  /** Writes the held completions, and those of jobs settling afterwards at once, until the next `hold()`. */
  write(): void {
    this.#holding = false;
    this.#next();
  }

  #next(): void {
    if (this.#writing || this.#held.length === 0) return;
    const batch = this.#held.length <= this.#max ? this.#held : this.#held.slice(0, this.#max);
    this.#held = batch === this.#held ? [] : this.#held.slice(this.#max);
    this.#writing = true;
    this.#complete(batch.map((held) => held.id)).then(
      () => this.#done(batch, undefined),
      (error: unknown) => this.#done(batch, { error }),
    );
  }

  #done(batch: Held[], failure: { error: unknown } | undefined): void {
    this.#writing = false;
    for (const held of batch) failure ? held.reject(failure.error) : held.resolve();
    // Those that settled meanwhile, held or not: nothing else may come to write them before the poll.
    this.#next();
  }
}
