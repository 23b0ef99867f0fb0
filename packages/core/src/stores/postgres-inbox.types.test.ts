import pg from 'pg';
import { describe, expectTypeOf, it } from 'vitest';
import type { Delivery } from '../protocol/delivery.js';
import { PostgresInbox } from './postgres-inbox.js';

// Types only: `pnpm typecheck` fails when the inbox's client is not the pool's own (docs/stores.md promises pg.PoolClient).
describe('PostgresInbox: its client is typed as the pool lends it', () => {
  it('infers pg.PoolClient from a pg.Pool, so query<Row>() types its rows', () => {
    const pool = new pg.Pool();
    const inbox = new PostgresInbox({ pool });
    expectTypeOf(inbox).toEqualTypeOf<PostgresInbox<pg.PoolClient>>();
    const query = (delivery: Delivery) =>
      inbox.client(delivery).query<{ id: string }>('SELECT id FROM orders');
    expectTypeOf(query).returns.resolves.toEqualTypeOf<pg.QueryResult<{ id: string }>>();
    void pool.end();
  });
});
