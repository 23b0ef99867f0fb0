import type { DedupeStore, TransactionalStore } from '@payhook/core';
import { MemoryStore } from '@payhook/core';

/** The duplicate store an example uses, its name for the logs, and how to close it on shutdown. */
export interface ExampleStore {
  store: DedupeStore | TransactionalStore;
  name: string;
  close(): Promise<void>;
}

/**
 * Chooses the examples' duplicate store from the environment. For now always memory: one instance remembers
 * what it handled until it stops.
 *
 * @example
 * const { store, close } = await createStoreFromEnv(process.env);
 */
export async function createStoreFromEnv(_env: NodeJS.ProcessEnv): Promise<ExampleStore> {
  return { store: new MemoryStore(), name: 'memory', close: async () => {} };
}
