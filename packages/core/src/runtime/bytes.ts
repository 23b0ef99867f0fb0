import { nodeBuffer } from './builtins.js';

// Node.js `Buffer` where the runtime has `node:buffer`, plain `Uint8Array`s with `TextEncoder` and `TextDecoder`
// elsewhere (workerd without `nodejs_compat`). Two paths because the native one is the fast one: verify, decode
// and parse of a 1.2 KB notification took 7 µs with node:crypto and Buffer, 29 µs without, on Node.js 20.
const NodeBuffer = nodeBuffer?.Buffer;
const encoder = new TextEncoder();
// `ignoreBOM`: a leading U+FEFF stays in the text, as `Buffer#toString` keeps it.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The UTF-8 bytes of `text`, in a new array the caller may change (a lone surrogate becomes U+FFFD). */
export function utf8Bytes(text: string): Uint8Array {
  return NodeBuffer ? NodeBuffer.from(text) : encoder.encode(text);
}

/** `bytes` read as UTF-8, each invalid sequence as U+FFFD. */
export function utf8Text(bytes: Uint8Array): string {
  if (!NodeBuffer) return decoder.decode(bytes);
  return NodeBuffer.isBuffer(bytes)
    ? bytes.toString()
    : NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString();
}

export function isUtf8(bytes: Uint8Array): boolean {
  if (nodeBuffer) return nodeBuffer.isUtf8(bytes);
  try {
    strictDecoder.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export function utf8Length(text: string): number {
  if (NodeBuffer) return NodeBuffer.byteLength(text);
  let length = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    // U+0080 to U+07FF take two bytes; a surrogate pair four; the rest of the BMP (a lone surrogate too) three.
    if (code < 0x800) length += 1;
    else if (code >= 0xd800 && code < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 2;
      i++;
    } else length += 2;
  }
  return length;
}

/** A body chunk as bytes of its own: a text as UTF-8, bytes copied (a stream may reuse its chunk). */
export function chunkBytes(chunk: Uint8Array | string): Uint8Array {
  if (typeof chunk === 'string') return utf8Bytes(chunk);
  return NodeBuffer ? NodeBuffer.from(chunk) : chunk.slice();
}

export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (NodeBuffer) return NodeBuffer.concat(chunks, size);
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}

/**
 * Encodes bytes or a UTF-8 string as base64url (RFC 4648 §5). Padding `=` is kept by default, as the service
 * does for both `data` and `signature`.
 *
 * @example
 * encodeBase64Url('{"a":1}'); // 'eyJhIjoxfQ=='
 */
export function encodeBase64Url(input: Uint8Array | string, options?: { pad?: boolean }): string {
  const bytes = typeof input === 'string' ? utf8Bytes(input) : input;
  const encoded = NodeBuffer
    ? NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64url')
    : base64UrlOf(bytes);
  return options?.pad === false ? encoded : withPadding(encoded);
}

export function withPadding(text: string): string {
  return text.length % 4 === 0 ? text : text + '='.repeat(4 - (text.length % 4));
}

/** -1 for misplaced padding or a length no encoder produces (a space counts as `+`). */
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
  return input.includes(' ') ? utf8Text(plusForSpaceBytes(input)) : input;
}

/** The UTF-8 bytes of `plusForSpace(input)`, for a digest that needs no string. */
export function plusForSpaceBytes(input: string): Uint8Array {
  const bytes = utf8Bytes(input);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 32) bytes[i] = 43;
  return bytes;
}

/**
 * Decodes base64url or standard base64, padded or not. A space is read as `+` (form decoding turns an unescaped
 * `+` into a space). Returns `undefined` for anything else: stray characters, misplaced padding, or a length no
 * encoder produces.
 *
 * @example
 * decodeBase64Url('eyJhIjoxfQ'); // Uint8Array [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d] (a Buffer on Node.js)
 */
export function decodeBase64Url(input: string): Uint8Array | undefined {
  const length = decodedLength(input);
  if (length < 0) return undefined;
  if (!NodeBuffer) return decodeDigits(input, length);
  // Node's decoder skips any character outside both alphabets and stops at a misplaced `=`, so any such character
  // leaves fewer bytes than the length promises: one length check validates without a scan of its own.
  const bytes = NodeBuffer.from(plusForSpace(input), 'base64');
  return bytes.length === length ? bytes : undefined;
}

/** Reused by `decodeBase64UrlText`: a notification decodes into it instead of into a new Buffer each time. */
const scratch = NodeBuffer?.allocUnsafe(16 * 1024);

/**
 * `decodeBase64Url(input)` read as UTF-8, without keeping the bytes: on Node.js, texts that fit are decoded into
 * one reused buffer (synchronously, so no caller can see another's bytes).
 */
export function decodeBase64UrlText(input: string): string | undefined {
  const length = decodedLength(input);
  if (length < 0) return undefined;
  if (!scratch || length > scratch.length) {
    const bytes = decodeBase64Url(input);
    return bytes && utf8Text(bytes);
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

/** `bytes` as unpadded base64url, without `node:buffer`. */
export function base64UrlOf(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const group = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    // 3 bytes are 4 digits; the last 1 or 2 bytes are 2 or 3.
    const digits = Math.min(4, Math.ceil(((bytes.length - i) * 4) / 3));
    for (let d = 0; d < digits; d++) text += URL_ALPHABET[(group >> (18 - 6 * d)) & 63];
  }
  return text;
}

/** The `length` bytes of a base64 or base64url text, without `node:buffer`; `undefined` at a stray character. */
function decodeDigits(text: string, length: number): Uint8Array | undefined {
  const bytes = new Uint8Array(length);
  let bits = 0;
  let held = 0;
  let written = 0;
  for (let i = 0; written < length; i++) {
    const code = text.charCodeAt(i);
    const value = code < 256 ? DIGIT[code]! : -1;
    if (value < 0) return undefined;
    bits = ((bits << 6) | value) & 0xffffff;
    held += 6;
    if (held >= 8) {
      held -= 8;
      bytes[written++] = bits >> held;
    }
  }
  return bytes;
}
