import { describe, expect, it } from 'vitest';
import { jsonText, memoryIO, printable } from './io.js';

describe('printable', () => {
  it.each([
    ['a\nb', 'a\\nb'],
    ['a\r\n\tb', 'a\\r\\n\\tb'],
    ['\u001b[2J\u0007', '\\x1b[2J\\x07'],
    ['nul\u0000 del\u007f csi\u009b nel\u0085', 'nul\\x00 del\\x7f csi\\x9b nel\\x85'],
    ['lone \ud800 and \udfff', 'lone \\u{d800} and \\u{dfff}'],
    ['bidi \u202e\u2066\u200f\u061c', 'bidi \\u{202e}\\u{2066}\\u{200f}\\u{61c}'],
    ['order-1 é € 😀 字', 'order-1 é € 😀 字'],
  ])('shows %j as %j', (text, shown) => {
    expect(printable(text)).toBe(shown);
  });
});

describe('the IO a command writes through', () => {
  it("keeps a command's own line breaks and tabs and escapes every other control character", () => {
    const { io, out, err } = memoryIO();
    io.stdout('col 1\tcol 2\nnext \u001b]0;title\u0007');
    io.stderr('\u009b31m\r');
    expect(out).toEqual(['col 1\tcol 2\nnext \\x1b]0;title\\x07']);
    expect(err).toEqual(['\\x9b31m\\r']);
  });
});

describe('jsonText', () => {
  it('is JSON that reads back as the value, with no raw control character', () => {
    const value = { key: 'k\n\u001b\u0007\u007f\u0085\u009b\ud800\u202e', n: 1 };
    const text = jsonText(value);
    expect(JSON.parse(text)).toEqual(value);
    expect(text).toBe('{"key":"k\\n\\u001b\\u0007\\u007f\\u0085\\u009b\\ud800\\u202e","n":1}');
  });
});
