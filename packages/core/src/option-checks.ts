// The checks every entry point's options go through when it is built (the handler, the API client, the reconciler,
// capture), and the one shape of their TypeError: `[@payhook/core] <option> must be <what>, not <value>.`

/** Node's timers take at most 2^31 - 1 ms; a longer wait fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The error of a wrong option. `shown: false` for an option that may hold a credential: its value is described
 * by kind and length only.
 */
export function optionError(name: string, expected: string, value: unknown, shown = true): TypeError {
  return new TypeError(`[@payhook/core] ${name} must be ${expected}, not ${describe(value, shown)}.`);
}

function describe(value: unknown, shown: boolean): string {
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    return shown && value.length <= 64 ? JSON.stringify(value) : `a string of ${value.length} characters`;
  }
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'symbol') return 'a symbol';
  return String(value);
}

/** A time option: milliseconds from `min` to `MAX_TIMER_MS` (it becomes a timer), or its default. */
export function duration(name: string, value: unknown, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
    throw optionError(name, `a number of milliseconds from ${min} to ${MAX_TIMER_MS}`, value);
  }
  return value;
}

export function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw optionError(name, 'a positive number', value);
  }
  return value;
}

export function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw optionError(name, 'a positive integer', value);
  return value as number;
}

export function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw optionError(name, 'true or false', value);
  return value;
}

export function optionalFunction<F extends (...args: never[]) => unknown>(
  name: string,
  value: F | undefined,
): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw optionError(name, 'a function', value);
  return value;
}

/** A required text option; `shown: false` for a credential. */
export function nonEmptyString(name: string, value: unknown, shown = true): string {
  if (typeof value !== 'string' || value === '') throw optionError(name, 'a non-empty string', value, shown);
  return value;
}

export function optionalStrings(name: string, value: unknown): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw optionError(name, 'an array of strings', value);
  }
  return value;
}

/** An object that has the functions `methods` (a logger, a queue, a capture). */
export function objectWith<T extends object>(
  name: string,
  value: unknown,
  methods: readonly string[],
  expected: string,
): T {
  const object = value as Record<string, unknown> | null;
  if (typeof object !== 'object' || object === null || methods.some((m) => typeof object[m] !== 'function')) {
    throw optionError(name, expected, value);
  }
  return value as T;
}
