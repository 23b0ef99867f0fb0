// The @payhook/payments/postgres entry: the PostgreSQL stores of the payment watch and the payment ledger, and
// their migrations.
export {
  ledgerMigrationSql,
  migrateLedger,
  PostgresLedgerStore,
  type PostgresLedgerStoreOptions,
} from './ledger/postgres.js';
export {
  migrateWatch,
  PostgresWatchStore,
  type PostgresWatchStoreOptions,
  watchMigrationSql,
} from './watch/postgres.js';
