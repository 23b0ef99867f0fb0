// The checks every entry point's options go through when it is built (the handler, capture, and in
// @payhook/payments the API client and the reconciler), and the one shape of their TypeError:
// `[<package>] <option> must be <what>, not <value>.`

/** Node's timers take at most 2^31 - 1 ms; a longer wait fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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

/**
 * The option checks of one package, each error starting with its name. Arrow fields, so a package may destructure
 * them (`const { duration } = createOptionChecks(…)`).
 */
export class OptionChecks {
  readonly #packageName: string;

  constructor(packageName: string) {
    this.#packageName = packageName;
  }

  /**
   * The error of a wrong option. `shown: false` for an option that may hold a credential: its value is described
   * by kind and length only.
   */
  readonly optionError = (name: string, expected: string, value: unknown, shown = true): TypeError =>
    new TypeError(`[${this.#packageName}] ${name} must be ${expected}, not ${describe(value, shown)}.`);

  /** A time option: milliseconds from `min` to `MAX_TIMER_MS` (it becomes a timer), or its default. */
  readonly duration = (name: string, value: unknown, fallback: number, min = 1): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_TIMER_MS) {
      throw this.optionError(name, `a number of milliseconds from ${min} to ${MAX_TIMER_MS}`, value);
    }
    return value;
  };

  readonly positive = (name: string, value: unknown, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw this.optionError(name, 'a positive number', value);
    }
    return value;
  };

  readonly positiveInteger = (name: string, value: unknown, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || (value as number) < 1)
      throw this.optionError(name, 'a positive integer', value);
    return value as number;
  };

  readonly flag = (name: string, value: unknown, fallback: boolean): boolean => {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') throw this.optionError(name, 'true or false', value);
    return value;
  };

  readonly optionalFunction = <F extends (...args: never[]) => unknown>(
    name: string,
    value: F | undefined,
  ): F | undefined => {
    if (value !== undefined && typeof value !== 'function') throw this.optionError(name, 'a function', value);
    return value;
  };

  /** A required text option; `shown: false` for a credential. */
  readonly nonEmptyString = (name: string, value: unknown, shown = true): string => {
    if (typeof value !== 'string' || value === '') {
      throw this.optionError(name, 'a non-empty string', value, shown);
    }
    return value;
  };

  readonly optionalStrings = (name: string, value: unknown): readonly string[] | undefined => {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      throw this.optionError(name, 'an array of strings', value);
    }
    return value;
  };

  /** An object that has the functions `methods` (a logger, a queue, a capture). */
  readonly objectWith = <T extends object>(
    name: string,
    value: unknown,
    methods: readonly string[],
    expected: string,
  ): T => {
    const object = value as Record<string, unknown> | null;
    if (
      typeof object !== 'object' ||
      object === null ||
      methods.some((m) => typeof object[m] !== 'function')
    ) {
      throw this.optionError(name, expected, value);
    }
    return value as T;
  };
}

/**
 * The option checks of one package, each error starting with its name: core's own are exported below, another
 * package (`@payhook/payments`) makes its own set once.
 *
 * @example
 * export const { duration, flag, optionError } = createOptionChecks('@payhook/payments');
 */
export function createOptionChecks(packageName: string): OptionChecks {
  return new OptionChecks(packageName);
}

export const {
  optionError,
  duration,
  positive,
  positiveInteger,
  flag,
  optionalFunction,
  nonEmptyString,
  optionalStrings,
  objectWith,
} = createOptionChecks('@payhook/core');
