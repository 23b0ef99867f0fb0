// The @payhook/payments/redis entry: the Redis stores of the payment watch and the payment ledger.
export { RedisLedgerStore, type RedisLedgerStoreOptions } from './ledger/redis.js';
export { RedisWatchStore, type RedisWatchStoreOptions } from './watch/redis.js';
