// The bench's arithmetic and bookkeeping, on made-up figures: no timing is measured or asserted here.
import { describe, expect, it } from 'vitest';
import type { HttpRowResult } from './http.js';
import type { MemoryRow } from './memory.js';
import type { MicroRow } from './micro.js';
import {
  createIdSource,
  encodeData,
  formBody,
  limitBodies,
  notificationJson,
  octokitBody,
  signData,
} from './payload.js';
import { rotate, spread } from './stats.js';
import { formatResults, type Results } from './table.js';
import { computeRatios } from './targets.js';

function micro(name: string, rounds: number[]): MicroRow {
  return { name, unit: 'µs', ...spread(rounds) };
}

function http(name: HttpRowResult['name'], rounds: number[]): HttpRowResult {
  return {
    name,
    unit: 'req/cpu-s',
    ...spread(rounds),
    rps: spread(rounds.map((r) => r / 2)),
    latencyP50: 5,
    handled: 101,
    answered: 100,
    generatorCpu: 0.5,
  };
}

describe('spread', () => {
  it('gives the median, min and max of an odd count', () => {
    expect(spread([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, rounds: [3, 1, 2] });
  });

  it('averages the two middle values of an even count', () => {
    expect(spread([4, 1, 3, 2]).median).toBe(2.5);
  });

  it('refuses no values', () => {
    expect(() => spread([])).toThrow(RangeError);
  });
});

describe('rotate', () => {
  it('starts each round one row later, so no row always runs first', () => {
    expect([0, 1, 2, 3].map((round) => rotate(['a', 'b', 'c'], round))).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
      ['a', 'b', 'c'],
    ]);
  });
});

describe('computeRatios', () => {
  const rows = [
    micro('payhook verifySignature + decodeData + parseNotification', [11, 12, 30]),
    micro('hand-written minimum', [10, 10, 10]),
    micro('standardwebhooks verify', [30, 30, 30]),
  ];

  it('takes the median of per-round ratios, and judges it against the target', () => {
    const ratio = computeRatios(rows, [], []).find((r) => r.name.startsWith('verify + decode + parse'));
    expect(ratio).toEqual({
      name: 'verify + decode + parse, time vs the hand-written minimum',
      median: 1.2,
      min: 1.1,
      max: 3,
      target: '<= 1.15',
      pass: false,
    });
  });

  it('passes a "times faster" target from the peer over payhook', () => {
    const ratio = computeRatios(rows, [], []).find((r) => r.name.startsWith('standardwebhooks'));
    expect(ratio?.median).toBe(2.5);
    expect(ratio?.pass).toBe(true);
  });

  it('leaves out comparisons whose rows this run did not measure', () => {
    const names = computeRatios(rows, [], []).map((r) => r.name);
    expect(names.some((name) => name.includes('CPU-second'))).toBe(false);
    expect(names.some((name) => name.includes('stripe'))).toBe(false);
  });

  it('compares HTTP rows by requests per server CPU-second, and MemoryStore against its byte and growth bounds', () => {
    const memory: MemoryRow[] = [
      {
        name: 'MemoryStore at 1,000,000 entries',
        bound: 1_000_000,
        bytesAtBound: 70,
        bytesAfterTwice: 99,
        growthAfterBound: 1.001,
      },
    ];
    const ratios = computeRatios(
      [],
      [http('Express 5 + payhook', [875, 750]), http('Express 5 bare', [1000, 1000])],
      memory,
    );
    expect(ratios.map((r) => [r.name, r.median, r.pass])).toEqual([
      ['Express 5 + payhook vs bare Express 5, per server CPU-second', 0.8125, false],
      ['MemoryStore at 1M entries, heap bytes per entry under churn', 99, true],
      ['MemoryStore at 1M entries, heap growth over one more bound of keys', 1.001, true],
    ]);
  });
});

describe('payload', () => {
  it('encodes data exactly as base64url of the notification JSON, padding kept', () => {
    const id = createIdSource()();
    const json = notificationJson(id);
    expect(encodeData(id)).toBe(Buffer.from(json).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'));
    expect(JSON.parse(json).payment_id).toBe(id);
  });

  it('makes ids that are UUID-shaped and never repeat within a source', () => {
    const next = createIdSource();
    const ids = Array.from({ length: 1000 }, next);
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('escapes the padding of both fields in the form body', () => {
    const data = encodeData(createIdSource()());
    const body = formBody(data, signData(data));
    const form = new URLSearchParams(body);
    expect(form.get('data')).toBe(data);
    expect(form.get('signature')).toHaveLength(44);
    expect(body).not.toMatch(/=[^&]*=/);
  });

  it('pads the octokit body to the requested size', () => {
    const body = octokitBody(createIdSource()(), 1666);
    expect(body).toHaveLength(1666);
    expect(JSON.parse(body).method).toBe('purchase');
  });
});

describe('formatResults', () => {
  it('prints the run header, each section present, and MISS for a missed target', () => {
    const results: Results = {
      date: '2026-11-22T21:00:00.000Z',
      mode: 'quick',
      node: '20.20.2',
      cpus: { count: 2, model: 'test CPU' },
      loadAverage: { start: [0.5, 0.4, 0.3], end: [0.6, 0.5, 0.4] },
      durationSeconds: 42,
      settings: {},
      micro: [micro('hand-written minimum', [10])],
      http: [],
      memory: [],
      stores: [],
      skipped: [{ name: 'Redis', reason: 'connect ECONNREFUSED 127.0.0.1:6379' }],
      ratios: [{ name: 'a ratio', median: 2, min: 2, max: 2, target: '<= 1.5', pass: false }],
    };
    const text = formatResults(results);
    expect(text.split('\n')[0]).toBe(
      '2026-11-22T21:00:00.000Z, quick run, Node 20.20.2, 2 × test CPU, load average at start 0.50 0.40 0.30, 42 s',
    );
    expect(text).toContain('| hand-written minimum | 10.00 | 10.00 – 10.00 | 1.00 |');
    expect(text).toContain('skipped: Redis: connect ECONNREFUSED 127.0.0.1:6379');
    expect(text).toContain('| a ratio | 2.00 | 2.00 – 2.00 | <= 1.5 | MISS |');
    expect(text).not.toContain('HTTP row');
  });
});

describe('limitBodies', () => {
  it('builds three bodies of one length, within a base64 quantum of the size', () => {
    const { plain, refused, worst } = limitBodies(1024 * 1024);
    expect(plain.length).toBeLessThanOrEqual(1024 * 1024);
    expect(plain.length).toBeGreaterThan(1024 * 1024 - 4);
    expect([refused.length, worst.length]).toEqual([plain.length, plain.length]);
    const fields = new URLSearchParams(plain.toString());
    expect(fields.get('signature')).toBe(signData(fields.get('data')!));
    expect(new URLSearchParams(worst.toString()).get('data')).toBe(' '.repeat(plain.length - 62));
  });
});
