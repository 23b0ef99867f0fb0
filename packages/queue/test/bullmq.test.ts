import { reachRedis } from '../../core/test/servers.ts';
import { makeEngine, makeStore, server } from './engines/bullmq.ts';
import { describeQueueEngine } from './queue-suite.ts';

describeQueueEngine('BullMQ', {
  up: await reachRedis(),
  module: new URL('./engines/bullmq.ts', import.meta.url),
  makeEngine,
  makeStore,
  server,
});
