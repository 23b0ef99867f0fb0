/**
 * The attribute names the instrumentation exports. OpenTelemetry's semantic conventions where one exists
 * (messaging, `error.type`); `payhook.*` for what they have no name for. The README lists both.
 *
 * @example
 * const refused = spans.filter((span) => span.attributes[ATTRIBUTES.errorType] === 'signature.invalid');
 */
export const ATTRIBUTES = {
  /** Semantic conventions (messaging, general). */
  messagingSystem: 'messaging.system',
  messagingOperationType: 'messaging.operation.type',
  messagingOperationName: 'messaging.operation.name',
  messagingMessageId: 'messaging.message.id',
  errorType: 'error.type',
  /** payhook's own. */
  event: 'payhook.event',
  outcome: 'payhook.outcome',
  via: 'payhook.via',
  status: 'payhook.status_code',
  secretIndex: 'payhook.secret.index',
  secretId: 'payhook.secret.id',
  /** What most likely made a refused signature fail (`sha1`, `secret_whitespace`...: docs/errors.md). */
  signatureHint: 'payhook.signature.hint',
  handlerCount: 'payhook.handler.count',
  handlerId: 'payhook.handler.id',
  storeStep: 'payhook.store.step',
  storeName: 'payhook.store.name',
  driftKind: 'payhook.drift.kind',
  driftName: 'payhook.drift.name',
  driftSentType: 'payhook.drift.sent_type',
  /** Why the payment watch reported a payment overdue: `unsettled`, `unknown_order` or `api_unreachable`. */
  watchReason: 'payhook.watch.reason',
  /** The operation of a payment watched (`purchase`, `auth`). */
  watchOperation: 'payhook.watch.operation',
  /** What the payment ledger decided instead of running the handlers: `stale` or `conflict`. */
  ledgerOutcome: 'payhook.ledger.outcome',
  /** The method of the notification the ledger decided about (`purchase`, `refund`). */
  ledgerMethod: 'payhook.ledger.method',
} as const;

/**
 * The metric names the instrumentation records.
 *
 * @example
 * const view = { instrumentName: METRICS.handlerDuration, aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM } };
 */
export const METRICS = {
  /** Semantic conventions: the duration of processing one message (a delivery); its count is the deliveries. */
  processDuration: 'messaging.process.duration',
  /** payhook's own. */
  refusals: 'payhook.refusals',
  handlerDuration: 'payhook.handler.duration',
  storeDuration: 'payhook.store.duration',
  storeFailures: 'payhook.store.failures',
  drift: 'payhook.drift',
  /** Payments the payment watch reported overdue, by `payhook.watch.reason`. */
  paymentsOverdue: 'payhook.payments.overdue',
  /** Notifications the payment ledger recorded as stale or as a conflict, by `payhook.ledger.outcome`. */
  ledgerDecisions: 'payhook.ledger.decisions',
} as const;

/** `messaging.system`: not one of the conventions' listed systems, so the library's name. */
export const MESSAGING_SYSTEM = 'payhook';
