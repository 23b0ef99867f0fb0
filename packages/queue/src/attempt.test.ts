import { afterEach, describe, expect, it, vi } from 'vitest';
import { Attempt } from './attempt.js';

/** Counts the AbortControllers made while the test runs. */
function countControllers(): () => number {
  let made = 0;
  vi.stubGlobal(
    'AbortController',
    class extends AbortController {
      constructor() {
        super();
        made++;
      }
    },
  );
  return () => made;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('Attempt', () => {
  it('makes its signal only when it is read, once', () => {
    const made = countControllers();
    const attempt = new Attempt(2, 10);
    expect([attempt.number, attempt.of, made()]).toEqual([2, 10, 0]);
    expect(attempt.signal).toBe(attempt.signal);
    expect(made()).toBe(1);
  });

  it('aborts a signal already read, with the reason', () => {
    const attempt = new Attempt(1, 1);
    const signal = attempt.signal;
    const heard: unknown[] = [];
    signal.addEventListener('abort', () => heard.push(signal.reason));
    const reason = new Error('handed back');
    attempt.abort(reason);
    expect(heard).toEqual([reason]);
  });

  it('answers a signal read after an abort aborted with the first reason, having made none before', () => {
    const made = countControllers();
    const attempt = new Attempt(1, 1);
    const first = new Error('expired');
    attempt.abort(first);
    attempt.abort(new Error('stopped'));
    expect(made()).toBe(0);
    expect(attempt.signal.aborted).toBe(true);
    expect(attempt.signal.reason).toBe(first);
  });
});
