// The @payhook/relay/file entry: the journal on the local disk (Node.js, Bun, Deno).
export type { FileJournalOptions } from './journal/file.js';
export { FileJournal } from './journal/file.js';
