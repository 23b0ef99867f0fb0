import { kit } from './engines/postgres.ts';
import { describeQueueEngine } from './queue-suite.ts';

describeQueueEngine(kit, await kit.reach());
