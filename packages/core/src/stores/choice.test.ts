import { describe, expect, it } from 'vitest';
import { createWebhookHandler } from '../handler.js';
import { chooseStore } from './choice.js';
import type { DedupeStore, TransactionalStore } from './contract.js';
import { MemoryStore } from './memory.js';

const inbox: TransactionalStore = { name: 'inbox', transaction: () => Promise.reject(new Error('unused')) };
const dedupe: DedupeStore = {
  name: 'dedupe',
  claim: () => ({ status: 'claimed', token: 't' }),
  renew: () => true,
  commit: () => true,
  release: () => undefined,
};

describe('the store a handler uses', () => {
  it('is a new MemoryStore when left out, none with false, and the one given otherwise', () => {
    expect(chooseStore(undefined, undefined)).toBeInstanceOf(MemoryStore);
    expect(chooseStore(false, undefined)).toBeUndefined();
    expect(chooseStore(dedupe, true)).toBe(dedupe);
    expect(chooseStore(inbox, false)).toBe(inbox);
  });

  it('refuses an object that is no store, naming both contracts', () => {
    expect(() => chooseStore({ claim: () => undefined }, undefined)).toThrow(
      '[@payhook/core] store must be a DedupeStore (claim, renew, commit and release), a TransactionalStore (transaction) or false, not an object.',
    );
  });

  it('refuses failOpen with a transactional store, when the handler is built', () => {
    const message = '[@payhook/core] failOpen cannot be used with a transactional store';
    expect(() => chooseStore(inbox, true)).toThrow(message);
    expect(() => createWebhookHandler({ secret: 'choice-secret', store: inbox, failOpen: true })).toThrow(
      message,
    );
  });
});
