/** One row's figure over the rounds: the median, and the lowest and highest round. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  rounds: number[];
}

/** The median (mean of the two middle values for an even count), min and max of the rounds' values. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spread of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, rounds: [...values] };
}

/** The items in the order of round `round`: rotated by one position per round, so no row always runs first. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const shift = items.length === 0 ? 0 : round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
