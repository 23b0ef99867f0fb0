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
 * Decodes base64url or standard base64, padded or not. A space is read as `+` (form decoding turns an unescaped
 * `+` into a space). Returns `undefined` for anything else: stray characters, misplaced padding, or a length no
 * encoder produces.
 *
 * @example
 * decodeBase64Url('eyJhIjoxfQ'); // <Buffer 7b 22 61 22 3a 31 7d>
 */
export function decodeBase64Url(input: string): Buffer | undefined {
  const text = input.includes(' ') ? input.replace(/ /g, '+') : input;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  if (padding > 0 && text.length % 4 !== 0) return undefined;
  const length = text.length - padding;
  const remainder = length % 4;
  if (remainder === 1 || (padding > 0 && remainder + padding !== 4)) return undefined;
  // Node's decoder skips any character outside both alphabets and stops at a misplaced `=`, so any such character
  // leaves fewer bytes than the length promises: one length check validates without a scan of its own.
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === (length * 3) >> 2 ? bytes : undefined;
}
