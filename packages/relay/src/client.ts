// The @payhook/relay/client entry: what `payhook relay` runs, for code that forwards a channel itself.
export type { ChannelStatus, ReplayOptions } from './client/admin.js';
export { createRelayChannel, relayStatus, replayRelay } from './client/admin.js';
export type { Backoff } from './client/backoff.js';
export type { ConnectOptions, ConnectReport } from './client/connect.js';
export { connectRelay } from './client/connect.js';
export type { Cursor, CursorStore } from './client/cursor.js';
export { fileCursor, memoryCursor } from './client/cursor.js';
export type { AppAnswer } from './client/forward.js';
export type { SseMessage } from './client/sse.js';
export { readSse } from './client/sse.js';
