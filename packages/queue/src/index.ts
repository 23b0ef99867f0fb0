export type {
  ConsumeOptions,
  Consumer,
  DeadFilter,
  DeadNotification,
  DeadSelection,
  JobAttempt,
  JobRunner,
  QueueEngine,
  WaitingFilter,
  WaitingNotification,
  WaitingSelection,
} from './engine.js';
export { UnrecoverableJobError } from './engine.js';
export type { Backoff, QueueEngineOptions } from './options.js';
export type { QueueWorker, WorkerOptions } from './worker.js';
export { createWorker } from './worker.js';
