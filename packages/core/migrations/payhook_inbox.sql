-- The payhook inbox: one row per notification key, a lease while a copy is handled, then done until expiry.
-- The primary key keeps a claim O(log n); the expiry index keeps prune() bounded. Safe to run again:
--   psql --single-transaction -f payhook_inbox.sql   (or migrate(pool) from @payhook/core/postgres)
-- Only what is missing is changed, each change checked first: DDL on the table (ALTER TABLE, and CREATE INDEX even
-- when the index exists) waits for every open transaction on it, and every delivery queues behind that wait.
CREATE TABLE IF NOT EXISTS "payhook_inbox" (
  key        text        PRIMARY KEY,
  done       boolean     NOT NULL DEFAULT false,
  token      text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  fence      bigint      NOT NULL DEFAULT 0
);
-- A table made before fences gains the column (instantly: a constant default).
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = '"payhook_inbox"'::regclass AND attname = 'fence' AND NOT attisdropped) THEN
    ALTER TABLE "payhook_inbox" ADD COLUMN fence bigint NOT NULL DEFAULT 0;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE i.indrelid = '"payhook_inbox"'::regclass AND c.relname = 'payhook_inbox_expires_at_idx') THEN
    CREATE INDEX IF NOT EXISTS "payhook_inbox_expires_at_idx" ON "payhook_inbox" (expires_at);
  END IF;
END $$;
