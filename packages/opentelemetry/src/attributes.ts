import type { Attributes } from '@opentelemetry/api';
import type { DeliveryMessage } from '@payhook/core/diagnostics';
import { ATTRIBUTES as A, MESSAGING_SYSTEM } from './names.js';

/** A delivery span's attributes at its start, by `via`: built once, as the SDK copies them into each span. */
export const PROCESS_ATTRIBUTES: Record<DeliveryMessage['via'], Attributes> = {
  request: processAttributes('request'),
  process: processAttributes('process'),
};

function processAttributes(via: DeliveryMessage['via']): Attributes {
  return {
    [A.messagingSystem]: MESSAGING_SYSTEM,
    [A.messagingOperationType]: 'process',
    [A.messagingOperationName]: 'process',
    [A.via]: via,
  };
}

/** A delivery span's attributes once it settled: never the notification, only what names and counts it. */
export function deliveryAttributes(message: DeliveryMessage): Attributes {
  const attributes: Attributes = {
    [A.outcome]: message.outcome,
    [A.handlerCount]: message.handlerCount,
    [A.secretIndex]: message.secretIndex,
  };
  if (message.status !== undefined) attributes[A.status] = message.status;
  if (message.event !== undefined) attributes[A.event] = message.event;
  if (message.key !== undefined) attributes[A.messagingMessageId] = message.key;
  if (message.secretId !== undefined) attributes[A.secretId] = message.secretId;
  if (message.hint !== undefined) attributes[A.signatureHint] = message.hint;
  return attributes;
}

/** Low-cardinality attributes for the delivery metrics: outcome, event, code; never the key. */
export function metricAttributes(message: DeliveryMessage): Attributes {
  const attributes: Attributes = {
    [A.messagingSystem]: MESSAGING_SYSTEM,
    [A.messagingOperationName]: 'process',
    [A.outcome]: message.outcome,
    [A.via]: message.via,
  };
  if (message.event !== undefined) attributes[A.event] = message.event;
  if (message.errorCode !== undefined) attributes[A.errorType] = message.errorCode;
  return attributes;
}
