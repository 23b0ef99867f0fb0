import { addDuration, type Duration } from './calendar.js';

/**
 * Something that happens at a point of the fake clock's time: a subscription charge, a delayed webhook.
 *
 * @example
 * fake.clock.register({ next: () => undefined, run: async () => {} });
 */
export interface Timeline {
  /** The time (ms) of the earliest pending event, or `undefined` when none is pending. */
  next(): number | undefined;
  /** Runs every event due at or before `now`. */
  run(now: number): Promise<void>;
}

/**
 * The fake service's clock. It moves only when told, like Stripe's test clocks: `advanceTo` and `advanceBy` stop
 * at every pending event on the way (charges, retries, delayed deliveries) in time order, set the clock to that
 * event's time, run it, and finish at the target.
 *
 * @example
 * const fake = new FakeService({ now: '2026-01-31T09:00:00Z', secret });
 * await fake.clock.advanceBy({ years: 1 }); // every charge due in the year ran, each with its webhook
 */
export class FakeClock {
  #now: number;
  readonly #timelines: Timeline[] = [];
  #running: Promise<void> = Promise.resolve();

  constructor(start: Date | string | number = Date.now()) {
    const time = new Date(start).getTime();
    if (Number.isNaN(time)) throw new RangeError('[@payhook/testing] the clock start is not a valid date.');
    this.#now = time;
  }

  /** The current fake time. */
  now(): Date {
    return new Date(this.#now);
  }

  /** Adds a source of timed events (the engine registers its scheduler and outbox). */
  register(timeline: Timeline): void {
    this.#timelines.push(timeline);
  }

  /**
   * Moves the clock to `target`, running every event due on the way, in order.
   * @throws {RangeError} when `target` is before the current time.
   */
  advanceTo(target: Date | string | number): Promise<void> {
    const time = new Date(target).getTime();
    if (Number.isNaN(time)) return Promise.reject(new RangeError('[@payhook/testing] not a valid date.'));
    const run = this.#running.then(() => this.#advance(time));
    this.#running = run.catch(() => undefined);
    return run;
  }

  /** Moves the clock forward by `duration` (ms, or calendar parts such as `{ months: 1 }`). */
  advanceBy(duration: Duration): Promise<void> {
    return this.#running.then(() => this.advanceTo(addDuration(new Date(this.#now), duration)));
  }

  /** Runs whatever is due now without moving the clock. */
  runDue(): Promise<void> {
    return this.advanceTo(this.#now);
  }

  async #advance(target: number): Promise<void> {
    if (target < this.#now) {
      throw new RangeError(
        `[@payhook/testing] the clock cannot go back from ${new Date(this.#now).toISOString()} to ${new Date(target).toISOString()}.`,
      );
    }
    for (let steps = 0; ; steps++) {
      if (steps > 1_000_000)
        throw new Error('[@payhook/testing] the clock made no progress: an event keeps itself due.');
      let earliest: number | undefined;
      for (const timeline of this.#timelines) {
        const at = timeline.next();
        if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
      }
      if (earliest === undefined || earliest > target) break;
      this.#now = Math.max(this.#now, earliest);
      for (const timeline of this.#timelines) await timeline.run(this.#now);
    }
    this.#now = target;
  }
}
