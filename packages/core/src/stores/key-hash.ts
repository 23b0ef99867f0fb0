/** The four hash words of a key, as the store keeps them (for tests that need colliding keys). */
export function keyHash(key: string): [number, number, number, number] {
  hashKey(key);
  return [hashed[0]!, hashed[1]!, hashed[2]!, hashed[3]!];
}

/** Where `hashKey` leaves its four words. */
export const hashed = new Int32Array(4);

/**
 * The key's 128-bit MurmurHash3 (x86_128, over its UTF-16 code units), into `hashed`. A non-cryptographic hash is
 * enough here, keys come from signed notifications, and it costs a tenth of a `createHash` call. Chance of any
 * collision among a million keys: about 1e-27.
 */
export function hashKey(key: string): void {
  const length = key.length;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  const blocks = length - (length % 8);
  for (let i = 0; i < blocks; i += 8) {
    h1 = mix(h1 ^ scramble(wordAt(key, i), C1, 15, C2), 19, h2, 0x561ccd1b);
    h2 = mix(h2 ^ scramble(wordAt(key, i + 2), C2, 16, C3), 17, h3, 0x0bcaa747);
    h3 = mix(h3 ^ scramble(wordAt(key, i + 4), C3, 17, C4), 15, h4, 0x96cd1c35);
    h4 = mix(h4 ^ scramble(wordAt(key, i + 6), C4, 18, C1), 13, h1, 0x32ac3b17);
  }
  const tail = length - blocks;
  if (tail > 6) h4 ^= scramble(unitAt(key, blocks + 6), C4, 18, C1);
  if (tail > 4) h3 ^= scramble(pairAt(key, blocks + 4), C3, 17, C4);
  if (tail > 2) h2 ^= scramble(pairAt(key, blocks + 2), C2, 16, C3);
  if (tail > 0) h1 ^= scramble(pairAt(key, blocks), C1, 15, C2);
  const bytes = length * 2;
  h1 ^= bytes;
  h2 ^= bytes;
  h3 ^= bytes;
  h4 ^= bytes;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  hashed[0] = h1;
  hashed[1] = h2;
  hashed[2] = h3;
  hashed[3] = h4;
}

const C1 = 0x239b961b;
const C2 = 0xab0e9789 | 0;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93 | 0;

/** The code unit at `i`, or 0 past the end (the hash reads its last block as if zero-padded). */
function unitAt(key: string, i: number): number {
  return i < key.length ? key.charCodeAt(i) : 0;
}

/** Two code units from `i` as one word (inside a full block: no bounds check). */
function wordAt(key: string, i: number): number {
  return key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
}

function pairAt(key: string, i: number): number {
  return unitAt(key, i) | (unitAt(key, i + 1) << 16);
}

function scramble(k: number, first: number, r: number, second: number): number {
  return Math.imul(rotl(Math.imul(k, first), r), second);
}

function mix(h: number, r: number, next: number, add: number): number {
  return (Math.imul(rotl(h, r) + next, 5) + add) | 0;
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}
