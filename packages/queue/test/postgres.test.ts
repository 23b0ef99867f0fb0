import { kit } from './engines/postgres.ts';
import { describeQueueEngine } from './queue-suite.ts';
import { describeRollingDeploy } from './shutdown-suite.ts';

describeQueueEngine(kit, await kit.reach());

describeRollingDeploy(kit, await kit.reach());
