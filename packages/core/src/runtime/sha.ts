// SHA-256 and SHA-1 (FIPS 180-4) in plain JavaScript, for runtimes without `node:crypto` (workerd without
// `nodejs_compat`, Node.js before 20.16). Synchronous, unlike Web Crypto's `digest`: `sign`, `verifySignature` and
// the store keys stay synchronous on every runtime. Node.js, Bun and Deno hash with `node:crypto` instead.

/** SHA-256's round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
/** The message schedule, reused: hashing is synchronous, so no two digests share it at once. */
const W = new Int32Array(80);

/** The message padded to whole 64-byte blocks: a 1 bit, zeros, then its length in bits (big-endian, 64 bits). */
function padded(message: Uint8Array): DataView {
  const blocks = new Uint8Array((message.length + 72) & ~63);
  blocks.set(message);
  blocks[message.length] = 0x80;
  const view = new DataView(blocks.buffer);
  view.setUint32(blocks.length - 8, Math.floor(message.length / 0x20000000));
  view.setUint32(blocks.length - 4, (message.length << 3) >>> 0);
  return view;
}

function digestOf(state: Int32Array): Uint8Array {
  const digest = new Uint8Array(state.length * 4);
  const view = new DataView(digest.buffer);
  for (let i = 0; i < state.length; i++) view.setInt32(i * 4, state[i]!);
  return digest;
}

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

export function sha256(message: Uint8Array): Uint8Array {
  const view = padded(message);
  const h = Int32Array.of(
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19,
  );
  for (let offset = 0; offset < view.byteLength; offset += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getInt32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const w15 = W[i - 15]!;
      const w2 = W[i - 2]!;
      const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
      const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
      W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
    }
    let a = h[0]!,
      b = h[1]!,
      c = h[2]!,
      d = h[3]!,
      e = h[4]!,
      f = h[5]!,
      g = h[6]!,
      k = h[7]!;
    for (let i = 0; i < 64; i++) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    add(h, a, b, c, d, e, f, g, k);
  }
  return digestOf(h);
}

/** Only for projects whose service account signs with SHA-1. */
export function sha1(message: Uint8Array): Uint8Array {
  const view = padded(message);
  const h = Int32Array.of(0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0);
  for (let offset = 0; offset < view.byteLength; offset += 64) {
    for (let i = 0; i < 16; i++) W[i] = view.getInt32(offset + i * 4);
    for (let i = 16; i < 80; i++) W[i] = rotr(W[i - 3]! ^ W[i - 8]! ^ W[i - 14]! ^ W[i - 16]!, 31);
    let a = h[0]!,
      b = h[1]!,
      c = h[2]!,
      d = h[3]!,
      e = h[4]!;
    for (let i = 0; i < 80; i++) {
      const f =
        i < 20
          ? ((b & c) | (~b & d)) + 0x5a827999
          : i < 40
            ? (b ^ c ^ d) + 0x6ed9eba1
            : i < 60
              ? ((b & c) | (b & d) | (c & d)) + 0x8f1bbcdc
              : (b ^ c ^ d) + 0xca62c1d6;
      const t = (rotr(a, 27) + f + e + W[i]!) | 0;
      e = d;
      d = c;
      c = rotr(b, 2);
      b = a;
      a = t;
    }
    add(h, a, b, c, d, e);
  }
  return digestOf(h);
}

/** Adds a block's working variables into the state (Int32Array wraps each sum to 32 bits). */
function add(state: Int32Array, ...words: number[]): void {
  for (let i = 0; i < words.length; i++) state[i]! += words[i]!;
}
