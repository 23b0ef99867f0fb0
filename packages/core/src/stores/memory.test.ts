import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DUPLICATE, formRequest, HANDLED } from '../../test/deliveries.js';
import { formBody, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { keyHash } from './key-hash.js';
import { MemoryStore } from './memory.js';

function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A store on a fake clock and two claims of 'k': the first (`stale`), then `current` once its 1 s lease ran out. */
function takenOver() {
  const clock = fakeClock();
  const store = new MemoryStore({ now: clock.now });
  const stale = store.claim('k', 1_000);
  clock.advance(1_001);
  return { store, stale, current: store.claim('k', 1_000) };
}

describe('MemoryStore', () => {
  it('claims a key once; a second claim is in flight until committed, then duplicate', () => {
    const store = new MemoryStore();
    const first = store.claim('k', 60_000);
    expect(first.status).toBe('claimed');
    expect(store.claim('k', 60_000)).toEqual({ status: 'in_flight' });
    if (first.status === 'claimed') store.commit('k', first.token, 60_000);
    expect(store.claim('k', 60_000)).toEqual({ status: 'duplicate' });
    expect(store.size).toBe(1);
  });

  it('lets the key be claimed again after a release', () => {
    const store = new MemoryStore();
    const first = store.claim('k', 60_000);
    if (first.status === 'claimed') store.release('k', first.token);
    expect(store.claim('k', 60_000).status).toBe('claimed');
  });

  it('releases only the caller own lease', () => {
    const { store, stale: late, current } = takenOver();
    expect(current.status).toBe('claimed');
    if (late.status === 'claimed') store.release('k', late.token);
    expect(store.claim('k', 1_000)).toEqual({ status: 'in_flight' });
  });

  it('lets an expired lease (a crashed handler) be claimed again', () => {
    const clock = fakeClock();
    const store = new MemoryStore({ now: clock.now });
    store.claim('k', 1_000);
    clock.advance(999);
    expect(store.claim('k', 1_000).status).toBe('in_flight');
    clock.advance(2);
    expect(store.claim('k', 1_000).status).toBe('claimed');
  });

  it('forgets a done key after its TTL', () => {
    const clock = fakeClock();
    const store = new MemoryStore({ now: clock.now });
    const claim = store.claim('k', 1_000);
    if (claim.status === 'claimed') store.commit('k', claim.token, 10_000);
    clock.advance(9_000);
    expect(store.claim('k', 1_000).status).toBe('duplicate');
    clock.advance(2_000);
    expect(store.claim('k', 1_000).status).toBe('claimed');
  });

  it('stays bounded under a flood of 1M unique ids', { timeout: 120_000 }, () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = new MemoryStore({ maxEntries: 10_000 });
    const fill = (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const key = `payment-${i}:purchase:success:1000`;
        const claim = store.claim(key, 60_000);
        if (claim.status !== 'claimed') throw new Error(`unexpected ${claim.status} for ${key}`);
        store.commit(key, claim.token, 3_600_000);
      }
    };
    fill(0, 100_000);
    gc();
    const before = process.memoryUsage().heapUsed;
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    fill(100_000, 1_000_000);
    gc();
    const after = process.memoryUsage().heapUsed;
    expect(store.size).toBe(10_000);
    // The newest keys are remembered, the oldest forgotten.
    expect(store.claim('payment-999999:purchase:success:1000', 1).status).toBe('duplicate');
    expect(store.claim('payment-0:purchase:success:1000', 1).status).toBe('claimed');
    // 900k more ids after the bound was reached: the heap does not grow with them.
    expect(after - before).toBeLessThan(8 * 1024 * 1024);
    // Nor does the store's own table, which lives outside the heap.
    expect(process.memoryUsage().arrayBuffers - arrayBuffersBefore).toBeLessThan(1024);
  });

  it('answers like a plain ordered map of keys, through growth and eviction (property)', () => {
    // The model: a Map in insertion order, the oldest key forgotten at the bound, expiries in whole seconds.
    const op = fc.record({
      key: fc.integer({ min: 0, max: 3_000 }),
      outcome: fc.constantFrom('commit', 'release'),
      ttl: fc.integer({ min: 0, max: 5_000 }),
      advance: fc.integer({ min: 0, max: 1_500 }),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_500 }),
        fc.array(op, { minLength: 1_000, maxLength: 4_000 }),
        (maxEntries, ops) => {
          const clock = fakeClock();
          const store = new MemoryStore({ maxEntries, now: clock.now });
          const epoch = clock.now();
          const seconds = () => Math.floor((clock.now() - epoch) / 1000);
          const model = new Map<string, number>();
          for (const { key: n, outcome, ttl, advance } of ops) {
            const key = `payment-${n}:purchase:success:1000`;
            const expiry = model.get(key);
            const expected = expiry !== undefined && expiry > seconds() ? 'duplicate' : 'claimed';
            const claim = store.claim(key, 60_000);
            expect(claim.status).toBe(expected);
            if (claim.status === 'claimed' && outcome === 'commit') {
              store.commit(key, claim.token, ttl);
              if (!model.has(key) && model.size === maxEntries) model.delete(model.keys().next().value!);
              model.set(key, seconds() + Math.ceil(ttl / 1000));
            } else if (claim.status === 'claimed') {
              store.release(key, claim.token);
            }
            expect(store.size).toBe(model.size);
            clock.advance(advance);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps the leases of two keys apart when their hashes share a lease bucket', () => {
    // Leases are bucketed by 30 bits of the first hash word: find two keys whose whole first word is the same
    // (about 80,000 keys in), so only the other three words tell them apart.
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const key = `payment-${i}:purchase:success:1000`;
      const bucket = keyHash(key)[0];
      const other = seen.get(bucket);
      if (other === undefined) seen.set(bucket, key);
      else pair = [other, key];
    }
    for (const [a, b] of [pair, [pair[1], pair[0]]] as const) {
      const store = new MemoryStore();
      const first = store.claim(a, 60_000);
      const second = store.claim(b, 60_000);
      expect([first.status, second.status]).toEqual(['claimed', 'claimed']);
      expect(store.claim(a, 60_000).status).toBe('in_flight');
      expect(store.claim(b, 60_000).status).toBe('in_flight');
      // The older lease sits behind the newer one in the bucket: release it first, then commit the newer.
      if (first.status === 'claimed') store.release(a, first.token);
      expect(store.claim(b, 60_000).status).toBe('in_flight');
      const again = store.claim(a, 60_000);
      expect(again.status).toBe('claimed');
      if (second.status === 'claimed') store.commit(b, second.token, 60_000);
      expect(store.claim(b, 60_000).status).toBe('duplicate');
      expect(store.claim(a, 60_000).status).toBe('in_flight');
      if (again.status === 'claimed') store.commit(a, again.token, 60_000);
      expect(store.claim(a, 60_000).status).toBe('duplicate');
    }
  });
  it('fences its claims: each claim of a key holds a larger fence, and a stale commit is refused without writing', () => {
    const { store, stale: first, current: second } = takenOver();
    if (first.status !== 'claimed' || second.status !== 'claimed') throw new Error('both claims should hold');
    expect(second.fence).toBeGreaterThan(first.fence!);
    expect(store.commit('k', first.token, 60_000)).toBe(false);
    expect(store.claim('k', 1_000)).toEqual({ status: 'in_flight' });
    expect(store.commit('k', second.token, 60_000)).toBe(true);
    expect(store.commit('k', second.token, 60_000)).toBe(false);
    expect(store.claim('k', 1_000)).toEqual({ status: 'duplicate' });
  });

  it('commits a claim whose lease expired when no other claim took the key', () => {
    const clock = fakeClock();
    const store = new MemoryStore({ now: clock.now });
    const claim = store.claim('k', 1_000);
    clock.advance(5_000);
    if (claim.status === 'claimed') expect(store.commit('k', claim.token, 60_000)).toBe(true);
    expect(store.claim('k', 1_000)).toEqual({ status: 'duplicate' });
  });

  it('counts its bound in notifications: completions done under a live lease and forgotten after the commit take no place', () => {
    const store = new MemoryStore({ maxEntries: 100 });
    const claim = (key: string) => {
      const claimed = store.claim(key, 60_000);
      if (claimed.status !== 'claimed') throw new Error(`${key} was ${claimed.status}`);
      return claimed.token;
    };
    for (let n = 0; n < 1_000; n++) {
      // As the protocol does it: the notification's lease held while each handler's completion is recorded.
      const token = claim(`n${n}`);
      for (let step = 0; step < 3; step++) store.commit(`n${n}#${step}`, claim(`n${n}#${step}`), 60_000);
      store.commit(`n${n}`, token, 60_000);
      for (let step = 0; step < 3; step++) store.forget(`n${n}#${step}`);
      expect(store.size).toBe(Math.min(n + 1, 100));
    }
    expect(store.claim('n900', 1).status).toBe('duplicate');
    expect(store.claim('n899', 1).status).toBe('claimed');
    expect(store.claim('n999#0', 1).status).toBe('claimed');
  });
});

describe.each([1, 2, 3])('the MemoryStore duplicate window with %i handler(s)', (handlers) => {
  it('counts notifications, not handlers: the maxEntries-th latest notification is still a duplicate', async () => {
    const webhook = createWebhookHandler({
      secret: SECRET,
      logger: false,
      store: new MemoryStore({ maxEntries: 100 }),
    });
    for (let i = 0; i < handlers; i++) webhook.on('purchase', function step() {});
    const body = (n: number) => formBody(purchase({ payment_id: `p-${n}`, order_id: `o-${n}` }));
    const deliver = async (n: number) => (await webhook(formRequest(body(n)), undefined)).body;
    for (let n = 0; n < 250; n++) expect(await deliver(n)).toBe(HANDLED);
    // The 100th latest (150) is remembered; the 101st (149) was forgotten, as with one handler.
    expect(await deliver(150)).toBe(DUPLICATE);
    expect(await deliver(149)).toBe(HANDLED);
  });
});
