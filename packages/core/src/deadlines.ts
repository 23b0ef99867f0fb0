/** A pending deadline: `cancel` it once the work finished in time. */
export interface Deadline {
  cancel(): void;
}

class Entry implements Deadline {
  readonly at: number;
  expire: (() => void) | undefined;
  readonly #queue: DeadlineQueue;

  constructor(queue: DeadlineQueue, at: number, expire: () => void) {
    this.#queue = queue;
    this.at = at;
    this.expire = expire;
  }

  cancel(): void {
    if (this.expire === undefined) return;
    this.expire = undefined;
    this.#queue.settled();
  }
}

/**
 * Deadlines that share one timer. Every body read needs one, but nearly all finish in time: a `setTimeout` and
 * `clearTimeout` each is a measurable share of a webhook's cost over HTTP. Deadlines of one length expire in the
 * order they were set, so a queue with one timer for its head does.
 */
class DeadlineQueue {
  readonly #ms: number;
  #entries: Entry[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Deadlines neither cancelled nor expired: while there are any, the timer keeps the process alive. */
  #pending = 0;

  constructor(ms: number) {
    this.#ms = ms;
  }

  add(expire: () => void): Deadline {
    this.#skipDone();
    const entry = new Entry(this, Date.now() + this.#ms, expire);
    this.#entries.push(entry);
    if (this.#pending++ === 0) this.#timer?.ref?.();
    if (this.#timer === undefined) this.#schedule(this.#ms);
    return entry;
  }

  /** One deadline fewer to wait for; with none left, the timer no longer holds the process (as `clearTimeout`). */
  settled(): void {
    if (--this.#pending === 0) this.#timer?.unref?.();
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(this.#fire, Math.max(0, ms));
    if (this.#pending === 0) this.#timer.unref?.();
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    const now = Date.now();
    for (;;) {
      this.#skipDone();
      const entry = this.#entries[this.#head];
      if (entry === undefined) return;
      if (entry.at > now) {
        this.#schedule(entry.at - now);
        return;
      }
      this.#head++;
      const expire = entry.expire!;
      entry.expire = undefined;
      this.#pending--;
      expire();
    }
  };

  #skipDone(): void {
    const entries = this.#entries;
    while (this.#head < entries.length && entries[this.#head]!.expire === undefined) this.#head++;
    if (this.#head === entries.length) {
      entries.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024) {
      this.#entries = entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

const queues = new Map<number, DeadlineQueue>();

/**
 * Calls `expire` after `ms` unless cancelled first, like `setTimeout`, on a timer shared by every deadline of
 * the same length.
 *
 * @example
 * const deadline = setDeadline(10_000, () => reject(timeoutError()));
 * stream.on('end', () => deadline.cancel());
 */
export function setDeadline(ms: number, expire: () => void): Deadline {
  let queue = queues.get(ms);
  if (queue === undefined) {
    queue = new DeadlineQueue(ms);
    queues.set(ms, queue);
  }
  return queue.add(expire);
}
