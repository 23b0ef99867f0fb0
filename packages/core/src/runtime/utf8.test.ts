import { isUtf8 as nodeIsUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importWithBuiltins } from '../../test/builtins.js';

// The module as on a runtime without `node:buffer` (workerd without nodejs_compat), checked against Buffer.
const web = await importWithBuiltins(undefined, () => import('./utf8.js'));
// Any text: astral characters, lone surrogates (UTF-8 turns them into U+FFFD) and a leading byte-order mark.
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constant('\ufeffa\ud800'),
);
// Any bytes: valid UTF-8 and not (truncated sequences, overlongs, stray continuations).
const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.string({ unit: 'grapheme' }).map((text) => new TextEncoder().encode(text)),
);

describe('without node:buffer', () => {
  it('works on plain Uint8Arrays, not Buffers', () =>
    expect(Buffer.isBuffer(web.utf8Bytes('a'))).toBe(false));

  it('encodes and measures any text as Buffer does', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(web.utf8Bytes(text)).toEqual(Uint8Array.from(Buffer.from(text)));
        expect(web.utf8Length(text)).toBe(Buffer.byteLength(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('decodes and checks any bytes as Buffer and isUtf8 do', () => {
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        expect(web.utf8Text(bytes)).toBe(Buffer.from(bytes).toString());
        expect(web.isUtf8(bytes)).toBe(nodeIsUtf8(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it('copies a chunk and joins chunks', () => {
    const chunk = Uint8Array.of(1, 2);
    const copy = web.chunkBytes(chunk);
    chunk[0] = 9;
    expect(copy).toEqual(Uint8Array.of(1, 2));
    expect(web.chunkBytes('é')).toEqual(Uint8Array.of(0xc3, 0xa9));
    expect(web.concatBytes([copy, Uint8Array.of(3), new Uint8Array(0)], 3)).toEqual(Uint8Array.of(1, 2, 3));
  });
});
