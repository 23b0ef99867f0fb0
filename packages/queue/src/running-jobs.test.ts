import { describe, expect, it } from 'vitest';
import { RunningJobs } from './running-jobs.js';

const job = (id: string) => ({ id, slot: -1 });

describe('RunningJobs', () => {
  it('takes a job out from the front, the middle or the end, keeping every other one once', () => {
    const running = new RunningJobs<{ id: string; slot: number }>();
    const jobs = ['a', 'b', 'c', 'd', 'e'].map(job);
    for (const j of jobs) running.add(j);
    expect(running.delete(jobs[0]!)).toBe(true);
    expect(running.delete(jobs[2]!)).toBe(true);
    // e took a's slot: taking it out by its new slot leaves b and d.
    expect(running.delete(jobs[4]!)).toBe(true);
    expect(running.values().map((j) => j.id)).toEqual(['d', 'b']);
    expect(running.values().map((j) => j.slot)).toEqual([0, 1]);
    expect(running.delete(jobs[1]!)).toBe(true);
    expect(running.delete(jobs[3]!)).toBe(true);
    expect(running.size).toBe(0);
  });

  it('answers false for a job taken out already or never added, and changes nothing', () => {
    const running = new RunningJobs<{ id: string; slot: number }>();
    const [a, b, stranger] = ['a', 'b', 'x'].map(job);
    running.add(a!);
    running.add(b!);
    expect(running.delete(a!)).toBe(true);
    expect(running.delete(a!)).toBe(false);
    // A stale slot pointing at another job's place is no match either.
    expect(running.delete({ id: 'y', slot: 0 })).toBe(false);
    expect(running.delete(stranger!)).toBe(false);
    expect(running.values()).toEqual([b]);
  });
});
