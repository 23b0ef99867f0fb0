// The @payhook/relay/redis entry: the journal in Redis (6.2+), shared by every relay instance.
export type { RedisCommander, RedisJournalOptions } from './journal/redis.js';
export { RedisJournal } from './journal/redis.js';
