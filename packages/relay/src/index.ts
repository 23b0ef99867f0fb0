// The relay for any runtime: `createRelay`, the in-memory journal, errors, and `verifyRelayHeader` for the app.
// Journals that need Node.js or a driver are on subpaths (`/file`, `/postgres`, `/redis`); the Node.js server is
// `/node`; the client that forwards a channel to a local app is `/client`.

export type { CreatedChannel } from './channels.js';
export type { RelayErrorCode } from './errors.js';
export { RELAY_ERROR_STATUS, RelayError } from './errors.js';
export type { RelayForward } from './forward-header.js';
export { channelKey, RELAY_HEADER, verifyRelayHeader } from './forward-header.js';
export type { RequestInfo } from './ingress.js';
export type {
  ChannelRecord,
  ChannelStats,
  Journal,
  JournalEntry,
  JournalEvent,
  Retention,
} from './journal/contract.js';
export type { MemoryJournalOptions } from './journal/memory.js';
export { MemoryJournal } from './journal/memory.js';
export type { RelayLogger, RelayOptions } from './options.js';
export type { Relay } from './relay.js';
export { createRelay } from './relay.js';
export type { RelayEvent } from './wire.js';
