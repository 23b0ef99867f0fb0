/**
 * Encodes bytes or a UTF-8 string as base64url (RFC 4648 §5). Padding `=` is kept by default, as the service
 * does for both `data` and `signature`.
 *
 * @example
 * encodeBase64Url('{"a":1}'); // 'eyJhIjoxfQ=='
 */
export function encodeBase64Url(input: Uint8Array | string, options?: { pad?: boolean }): string {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.from(input);
  const encoded = bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
  return options?.pad === false ? encoded.replace(/=+$/, '') : encoded;
}

/**
 * The byte count a base64url or base64 text (a space read as `+`) decodes to, or -1 for misplaced padding or a
 * length no encoder produces.
 */
function decodedLength(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (padding > 0 && text.length % 4 !== 0) return -1;
  const length = text.length - padding;
  const remainder = length % 4;
  if (remainder === 1 || (padding > 0 && remainder + padding !== 4)) return -1;
  return (length * 3) >> 2;
}

/**
 * `input` with every space turned back into `+`, through its UTF-8 bytes (0x20 is only ever a space there): far
 * cheaper than a global replace on many spaces. A lone surrogate comes back as U+FFFD, as UTF-8 encoding (hashing)
 * turns it anyway; no base64 text holds one.
 */
export function plusForSpace(input: string): string {
  return input.includes(' ') ? plusForSpaceBytes(input).toString() : input;
}

/** The UTF-8 bytes of `plusForSpace(input)`, for a digest that needs no string. */
export function plusForSpaceBytes(input: string): Buffer {
  const bytes = Buffer.from(input);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 32) bytes[i] = 43;
  return bytes;
}

/**
 * Decodes base64url or standard base64, padded or not. A space is read as `+` (form decoding turns an unescaped
 * `+` into a space). Returns `undefined` for anything else: stray characters, misplaced padding, or a length no
 * encoder produces.
 *
 * @example
 * decodeBase64Url('eyJhIjoxfQ'); // <Buffer 7b 22 61 22 3a 31 7d>
 */
export function decodeBase64Url(input: string): Buffer | undefined {
  const text = plusForSpace(input);
  const length = decodedLength(text);
  if (length < 0) return undefined;
  // Node's decoder skips any character outside both alphabets and stops at a misplaced `=`, so any such character
  // leaves fewer bytes than the length promises: one length check validates without a scan of its own.
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === length ? bytes : undefined;
}

/** Reused by `decodeBase64UrlText`: a notification decodes into it instead of into a new Buffer each time. */
const scratch = Buffer.allocUnsafe(16 * 1024);

/**
 * `decodeBase64Url(input)?.toString('utf8')`, without keeping the bytes: texts that fit are decoded into one
 * reused buffer (synchronously, so no caller can see another's bytes).
 */
export function decodeBase64UrlText(input: string): string | undefined {
  const length = decodedLength(input);
  if (length < 0) return undefined;
  if (length > scratch.length) {
    const bytes = decodeBase64Url(input);
    return bytes?.toString('utf8');
  }
  if (scratch.write(input, 0, length, 'base64') === length) return scratch.toString('utf8', 0, length);
  // The decoder skipped a character: a space (a `+` turned by form decoding) is worth a second try.
  if (!input.includes(' ')) return undefined;
  const text = plusForSpace(input);
  return scratch.write(text, 0, length, 'base64') === length
    ? scratch.toString('utf8', 0, length)
    : undefined;
}

const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Base64 and base64url digits to their 6-bit values (a space is a `+` that form decoding turned); -1 otherwise. */
const DIGIT = new Int8Array(256).fill(-1);
/** 1 for a base64url digit, 2 for a digit of the other spellings (`+`, `/`, space), 4 for anything else. */
const CLASS = new Uint8Array(256).fill(4);
for (let i = 0; i < 64; i++) {
  DIGIT[URL_ALPHABET.charCodeAt(i)] = i;
  CLASS[URL_ALPHABET.charCodeAt(i)] = 1;
}
for (const [char, value] of [
  ['+', 62],
  [' ', 62],
  ['/', 63],
] as const) {
  DIGIT[char.charCodeAt(0)] = value;
  CLASS[char.charCodeAt(0)] = 2;
}

/**
 * The canonical unpadded base64url spelling of a `bytes`-byte digest received as `text` (base64url or base64,
 * padded or not, `+` turned into a space, spare bits of the last digit set), or `undefined` when it cannot be one.
 * Reads only the sender's text, before any hashing.
 */
export function canonicalDigest(text: string, bytes: number): string | undefined {
  const digits = Math.ceil((bytes * 8) / 6);
  const length = text.length;
  if (length !== digits && (length !== Math.ceil(bytes / 3) * 4 || !isPadding(text, digits))) {
    return undefined;
  }
  let classes = 0;
  for (let i = 0; i < digits; i++) {
    const code = text.charCodeAt(i);
    classes |= code < 256 ? CLASS[code]! : 4;
  }
  if (classes & 4) return undefined;
  // The last digit carries fewer bits than six; decoders ignore the rest, so a sender may leave them set.
  const spare = (1 << (digits * 6 - bytes * 8)) - 1;
  const last = DIGIT[text.charCodeAt(digits - 1)]!;
  if (classes === 1 && (last & spare) === 0) return length === digits ? text : text.slice(0, digits);
  let canonical = '';
  for (let i = 0; i < digits - 1; i++) canonical += URL_ALPHABET[DIGIT[text.charCodeAt(i)]!];
  return canonical + URL_ALPHABET[last & ~spare];
}

function isPadding(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) if (text.charCodeAt(i) !== 61) return false;
  return true;
}
