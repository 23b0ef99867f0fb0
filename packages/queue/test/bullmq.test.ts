import { kit } from './engines/bullmq.ts';
import { describeQueueEngine } from './queue-suite.ts';

describeQueueEngine(kit, await kit.reach());
