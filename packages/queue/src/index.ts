export type {
  ConsumeOptions,
  Consumer,
  DeadFilter,
  DeadNotification,
  DeadSelection,
  JobAttempt,
  JobRunner,
  QueueEngine,
} from './engine.js';
