import { optionError } from '../option-checks.js';
import { type DedupeStore, isTransactionalStore, type TransactionalStore } from './contract.js';
import { MemoryStore } from './memory.js';

// Which store a handler uses, decided once when it is built (its `store` option); `ExactlyOnce` then runs the
// protocol of the contract the store implements (a DedupeStore's claims, or a TransactionalStore's transaction).

const STORE = 'a DedupeStore (claim, renew, commit and release), a TransactionalStore (transaction) or false';

/**
 * The `store` option: the default `MemoryStore`, none (`false`: `undefined`), or one with the methods of a store
 * contract; a transactional store refuses `failOpen`, whose handlers would run outside its transaction.
 *
 * @example
 * const store = chooseStore(options.store, options.failOpen); // new MemoryStore() when left out
 */
export function chooseStore(store: unknown, failOpen: unknown): DedupeStore | TransactionalStore | undefined {
  if (store === false) return undefined;
  const chosen = store ?? new MemoryStore();
  if (!isStore(chosen)) throw optionError('store', STORE, chosen);
  if (isTransactionalStore(chosen) && failOpen) {
    throw new TypeError(
      '[@payhook/core] failOpen cannot be used with a transactional store: handlers would run without the transaction their writes need (inbox.client(delivery)).',
    );
  }
  return chosen;
}

function isStore(store: unknown): store is DedupeStore | TransactionalStore {
  if (typeof store !== 'object' || store === null) return false;
  const s = store as Record<string, unknown>;
  if (typeof s.transaction === 'function') return true;
  return ['claim', 'renew', 'commit', 'release'].every((method) => typeof s[method] === 'function');
}
