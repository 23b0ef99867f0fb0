// The @payhook/payments/redis entry: the payment watch's Redis store.
export { RedisWatchStore, type RedisWatchStoreOptions } from './watch/redis.js';
