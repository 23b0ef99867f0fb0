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
 * `input` with every space turned back into `+`, through its UTF-8 bytes (0x20 is only ever a space there): V8's
 * global replace costs about 100 ns a match, 100 ms for a megabyte of spaces. A lone surrogate comes back as U+FFFD,
 * as UTF-8 encoding (hashing) turns it anyway; no base64 text holds one.
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
