/** An integer option from `min`, or its default; anything else throws a TypeError naming it. */
export function integerOption(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`[@payhook/queue] ${name} must be an integer from ${min}, not ${String(value)}.`);
  }
  return value;
}
