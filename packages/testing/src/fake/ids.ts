/** Deterministic identifiers for the fake service: the same seed gives the same ids in the same order. */
export interface IdSource {
  /** A UUID (version 4 layout) drawn from the seeded sequence. */
  uuid(): string;
  /** `bytes` random bytes from the sequence as lowercase hex. */
  hex(bytes: number): string;
}

/**
 * Creates a seeded id source (mulberry32), so tests that create payments get the same ids on every run.
 *
 * @example
 * const ids = createIdSource(42);
 * ids.uuid(); // the same string on every run
 */
export function createIdSource(seed = 1): IdSource {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) & 0xff;
  };
  const hex = (bytes: number): string => {
    let out = '';
    for (let i = 0; i < bytes; i++) out += next().toString(16).padStart(2, '0');
    return out;
  };
  return {
    hex,
    uuid() {
      const h = hex(16);
      const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
}
