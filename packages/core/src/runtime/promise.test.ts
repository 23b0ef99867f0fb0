import { describe, expect, it } from 'vitest';
import { isPromiseLike } from './promise.js';

/** An object with a `then` property, built without the literal the linter rightly flags elsewhere. */
function withThen(then: unknown): object {
  return Object.defineProperty({}, 'then', { value: then });
}

describe('isPromiseLike', () => {
  it('answers true for a native promise and for any object with a then method', () => {
    expect(isPromiseLike(Promise.resolve(1))).toBe(true);
    expect(isPromiseLike(withThen(() => undefined))).toBe(true);
  });

  it('answers false for plain values, null, undefined and a then that is not a function', () => {
    for (const value of [0, 'then', null, undefined, {}, withThen(1), () => undefined]) {
      expect(isPromiseLike(value)).toBe(false);
    }
  });
});
