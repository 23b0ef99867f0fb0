// `@payhook/core/diagnostics`: the `diagnostics_channel` names payhook publishes on and the messages it sends, for
// an operator's own subscriber (`@payhook/opentelemetry` is one).

export { publishOverdue } from './channels.js';
export type {
  DeliveryMessage,
  DriftMessage,
  HandlerRunMessage,
  LedgerMessage,
  RefusalMessage,
  StoreCallMessage,
  WatchMessage,
} from './messages.js';
export { PAYHOOK_CHANNELS } from './messages.js';
