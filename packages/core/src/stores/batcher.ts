interface Waiting<I, O> {
  readonly input: I;
  resolve(output: O): void;
  reject(error: unknown): void;
}

/**
 * Groups calls that arrive while earlier ones are being sent, without a timer: a call goes out at once while fewer
 * than `lanes` sends are under way (a lone call never waits), and the calls made meanwhile go out together, in one
 * `send`, as soon as a lane is free. `send` answers one output per input, in order; when it fails, every call of
 * that send fails with its error, as each would have alone.
 */
export class Batcher<I, O> {
  readonly #send: (inputs: readonly I[]) => Promise<readonly O[]>;
  readonly #lanes: number;
  readonly #max: number;
  #queue: Waiting<I, O>[] = [];
  #busy = 0;

  constructor(
    send: (inputs: readonly I[]) => Promise<readonly O[]>,
    options: { lanes: number; max: number },
  ) {
    this.#send = send;
    this.#lanes = options.lanes;
    this.#max = options.max;
  }

  /** Sends `input` at once when a lane is free, else with the others waiting; resolves its own output. */
  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ input, resolve, reject });
      if (this.#busy < this.#lanes) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#busy++;
    while (this.#queue.length > 0) {
      const batch = this.#queue.length <= this.#max ? this.#queue : this.#queue.slice(0, this.#max);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(this.#max);
      let outputs: readonly O[];
      try {
        outputs = await this.#send(batch.map((waiting) => waiting.input));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
        continue;
      }
      for (const [i, waiting] of batch.entries()) waiting.resolve(outputs[i]!);
    }
    this.#busy--;
  }
}
