// The @payhook/relay/postgres entry: the journal in PostgreSQL, shared by every relay instance.
export type { PostgresJournalOptions } from './journal/postgres.js';
export { PostgresJournal, relayMigrationSql } from './journal/postgres.js';
