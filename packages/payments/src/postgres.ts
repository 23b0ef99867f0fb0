// The @payhook/payments/postgres entry: the payment watch's PostgreSQL store and its migration.
export {
  migrateWatch,
  PostgresWatchStore,
  type PostgresWatchStoreOptions,
  watchMigrationSql,
} from './watch/postgres.js';
