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
