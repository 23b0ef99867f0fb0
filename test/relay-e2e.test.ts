import { describe, expect, it } from 'vitest';
import { DATABASE_URL, reachPostgres } from '../packages/core/test/servers.ts';
import { relayEndToEnd, verdict } from '../scripts/relay-e2e.ts';

// Issue 48's first must-show, scaled down (pnpm relay:e2e runs 1,000): the fake service's webhooks through the
// built payhook-relay (PostgreSQL journal) and the built payhook relay connect to an Express app on PostgreSQL.
const postgres = await reachPostgres();

describe.skipIf(!postgres)(
  'the fake service → payhook-relay → payhook relay connect → Express on PostgreSQL',
  () => {
    it('handles every payment exactly once, with the SHA-256 of each body equal at the outbox and at the app', async () => {
      const run = await relayEndToEnd({ payments: 60, databaseUrl: DATABASE_URL });
      expect(verdict(run)).toEqual([]);
      expect(run.sent).toHaveLength(60);
      expect([...run.received].sort()).toEqual([...run.sent].sort());
    }, 120_000);

    it('finds the problem when a body changed on the way or a notification ran twice', () => {
      const run = {
        payments: 2,
        sent: ['a', 'b'],
        received: ['a', 'c'],
        handled: new Map([
          ['k1', 1],
          ['k2', 2],
        ]),
        seconds: 1,
      };
      expect(verdict(run)).toEqual([
        'the SHA-256 of the bodies differ: 2 sent, 2 received',
        'a notification was handled more than once',
      ]);
    });
  },
);
