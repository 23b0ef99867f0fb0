import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setDeadline } from './deadlines.js';

describe('setDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires each deadline at its own time, in order, and never a cancelled one', () => {
    const expired: string[] = [];
    const a = setDeadline(100, () => expired.push('a'));
    vi.advanceTimersByTime(30);
    const b = setDeadline(100, () => expired.push('b'));
    vi.advanceTimersByTime(30);
    setDeadline(100, () => expired.push('c'));
    a.cancel();
    vi.advanceTimersByTime(69); // t = 129: b is due at 130
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b']);
    b.cancel(); // after it expired: nothing happens
    vi.advanceTimersByTime(29);
    expect(expired).toEqual(['b']);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['b', 'c']);
  });

  it('keeps one timer for any number of deadlines of one length', () => {
    const expired: number[] = [];
    const deadlines = Array.from({ length: 5_000 }, (_, i) => setDeadline(250, () => expired.push(i)));
    expect(vi.getTimerCount()).toBe(1);
    for (const [i, deadline] of deadlines.entries()) if (i % 2 === 0) deadline.cancel();
    vi.advanceTimersByTime(250);
    expect(expired).toHaveLength(2_500);
    expect(expired.every((i) => i % 2 === 1)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps lengths apart: a short deadline set after a long one still expires first', () => {
    const expired: string[] = [];
    setDeadline(1_000, () => expired.push('long'));
    setDeadline(10, () => expired.push('short'));
    vi.advanceTimersByTime(10);
    expect(expired).toEqual(['short']);
    vi.advanceTimersByTime(990);
    expect(expired).toEqual(['short', 'long']);
  });

  it('stops its timer once every deadline was cancelled', () => {
    for (let i = 0; i < 10; i++) setDeadline(500, () => expect.unreachable()).cancel();
    vi.advanceTimersByTime(500);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('setDeadline and the process', () => {
  const run = (code: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
      timeout: 20_000,
    });

  it('keeps the process alive while a deadline is pending, like setTimeout', () => {
    const result = run(
      // The first deadline is cancelled, so the timer lets go; the second must make it hold the process again.
      "const { setDeadline } = await import('./deadlines.ts'); setDeadline(200, () => {}).cancel(); await new Promise((resolve) => setDeadline(200, resolve)); console.log('expired');",
    );
    expect(result.stdout).toContain('expired');
    expect(result.status).toBe(0);
  });

  it('lets the process exit at once when every deadline was cancelled, like clearTimeout', () => {
    // The deadline is a minute away and the child is killed after 20 s: exit status 0 means it ended on its own.
    const result = run(
      "const { setDeadline } = await import('./deadlines.ts'); setDeadline(60_000, () => console.log('expired')).cancel();",
    );
    expect(result.status).toBe(0);
    expect(result.stdout).not.toContain('expired');
  });
});
