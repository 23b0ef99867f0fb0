import {
  type DeliveryMessage,
  deliveryMessage,
  publishRefusal,
  traceDelivery,
} from '../diagnostics/channels.js';
import { ERROR_STATUS, type WebhookError } from '../errors.js';
import type { Processed, Processor, WebhookHandler } from '../handler.js';
import { asWebhookError } from '../http/answers.js';
import type { Received } from './delivery.js';

/** `webhook.process`: the processor outside a request, its refusals reported and thrown, traced when anyone listens. */
export function createProcess<C>(
  processNotification: Processor<C>,
  report: (error: WebhookError, remoteAddress: string | undefined) => void,
): WebhookHandler<C>['process'] {
  const processOne = async (received: Received<C>): Promise<Processed> => {
    try {
      return await processNotification(received);
    } catch (error) {
      const known = asWebhookError(error);
      report(known, undefined);
      publishRefusal('process', known.code, known.status);
      throw known;
    }
  };
  return (notification, context, processOptions) => {
    const { secretIndex = -1, secretId, signal } = processOptions ?? {};
    const received = { notification, context: context as C, secretIndex, secretId, signal };
    const traced = deliveryMessage('process');
    if (traced === undefined) return processOne(received);
    return traceDelivery(traced, () => processOne({ ...received, traced }), finishProcess);
  };
}

/** A traced `process` call's message completed from its outcome, or the `WebhookError` it threw. */
function finishProcess(message: DeliveryMessage, outcome: Processed | undefined, error: unknown): void {
  const code = (error as WebhookError | undefined)?.code;
  message.outcome = outcome ?? 'refused';
  message.errorCode = code;
  message.status = code === undefined ? 200 : ERROR_STATUS[code];
}
