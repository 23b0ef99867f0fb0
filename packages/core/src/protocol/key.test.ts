import { describe, expect, it } from 'vitest';
import { boundKey } from './key.js';

describe('boundKey', () => {
  it('keeps a key a store can hold as it is', () => {
    const key = 'a3bb189e-8bf9-4888-9912-ace4e6543002:purchase:success:1000';
    expect(boundKey(key)).toBe(key);
    expect(boundKey('order 😀:refund:success:')).toBe('order 😀:refund:success:');
    expect(boundKey('x'.repeat(200))).toBe('x'.repeat(200));
  });

  it('turns a long key into its readable start and a hash of the whole, distinct per key', () => {
    const long = boundKey(`${'x'.repeat(3_000)}a`);
    expect(long).toMatch(/^x{100}#sha256:[\w-]{43}$/);
    expect(boundKey(`${'x'.repeat(3_000)}b`)).not.toBe(long);
    // A start cut inside a surrogate pair drops its high half.
    expect(boundKey(`${'x'.repeat(99)}😀${'y'.repeat(200)}`)).toMatch(/^x{99}#sha256:/);
  });

  it('hashes a key holding a NUL or a lone surrogate, so no store refuses it or meets another', () => {
    for (const key of ['pay\0ment', 'pay\ud800ment', 'pay\udc00ment', 'payment\ud83d']) {
      expect(boundKey(key), JSON.stringify(key)).toMatch(/^#sha256:[\w-]{43}$/);
    }
    // A UTF-8 store would keep both as U+FFFD: hashed over code units they stay apart.
    expect(boundKey('pay\ud800ment')).not.toBe(boundKey('pay\ufffdment'));
    expect(boundKey('pay\ufffdment')).toBe('pay\ufffdment');
  });
});
