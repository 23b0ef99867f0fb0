import { deliveryMessage, describeDelivery, publishRefusal, traceDelivery } from '../diagnostics/channels.js';
import type { DeliveryMessage } from '../diagnostics/messages.js';
import { ERROR_STATUS, type WebhookError } from '../errors.js';
import { asWebhookError, type WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import type { ResolvedOptions } from '../options.js';
import { isPromiseLike } from '../runtime/promise.js';
import { factsOf, type Received } from './delivery.js';
import type { ExactlyOnce, Outcome, Work } from './exactly-once.js';
import { type Part, type PartRun, partRuns, type Route, type Routes } from './routes.js';

/**
 * What `process` passes on to the handlers' `delivery` about how the notification was verified.
 *
 * @example
 * await webhook.process(notification, undefined, { secretIndex: 0 });
 */
export interface ProcessOptions {
  /**
   * The position of the secret its signature matched, when it was verified as a webhook; -1 (the default) when it
   * was not (a record fetched from the API).
   */
  secretIndex?: number;
  /** That secret's `id`, when secrets are named. */
  secretId?: string;
  /** Aborts the handlers' `delivery.signal` when it aborts (a queue worker handing the job back at shutdown). */
  signal?: AbortSignal;
  /**
   * Runs only the handlers a queue worker runs: all but those registered `{ inline: true }`, which ran in the request
   * (`createWorker` passes it). `ignored` when the notification reaches none.
   * @default false
   */
  queued?: boolean;
}

/** `webhook.process`: the processor outside a request, its refusals reported and thrown, traced when anyone listens. */
export function createProcess<C>(
  processNotification: Processor<C>,
  report: (error: WebhookError, remoteAddress: string | undefined) => void,
): (notification: Notification, context?: C, options?: ProcessOptions) => Promise<Processed> {
  const processOne = async (received: Received<C>, part: Part): Promise<Processed> => {
    try {
      return await processNotification(received, part);
    } catch (error) {
      const known = asWebhookError(error);
      report(known, undefined);
      publishRefusal('process', known.code, known.status);
      throw known;
    }
  };
  return (notification, context, processOptions) => {
    const { secretIndex = -1, secretId, signal, queued } = processOptions ?? {};
    const received = { notification, context: context as C, secretIndex, secretId, signal };
    const part: Part = queued === true ? 'queued' : 'all';
    const traced = deliveryMessage('process');
    if (traced === undefined) return processOne(received, part);
    return traceDelivery(traced, () => processOne({ ...received, traced }, part), finishProcess);
  };
}

function finishProcess(message: DeliveryMessage, outcome: Processed | undefined, error: unknown): void {
  const code = (error as WebhookError | undefined)?.code;
  message.outcome = outcome ?? 'refused';
  message.errorCode = code;
  message.status = code === undefined ? 200 : ERROR_STATUS[code];
}

/** How `process` took a notification: a delivery's 200 outcomes but those of a queue. */
type Processed = Exclude<WebhookOutcome, 'refused' | 'queued' | 'handled+queued'>;

export type Processor<C> = (
  received: Received<C>,
  part?: Part,
  within?: (transaction: unknown) => Promise<unknown>,
) => Processed | PromiseLike<Processed>;

/**
 * What `handle` and `process` share once a notification is verified: its key, its handlers, one run of them (two
 * with inline and queued handlers: `part` says which, `within` runs in the inline part's transaction).
 */
export function createProcessor<C>(
  options: Pick<ResolvedOptions<C>, 'ordering' | 'onStale'>,
  routes: Routes<C>,
  keyFor: (notification: Notification) => string | undefined,
  once: ExactlyOnce<C>,
): Processor<C> {
  const { ordering, onStale } = options;
  const recorded = (notification: Notification, outcome: Outcome): Outcome => {
    if (outcome === 'handled') ordering?.record(notification);
    return outcome;
  };
  return (received, part = 'all', within) => {
    const { notification, context, traced, signal } = received;
    const key = keyFor(notification);
    const delivery = factsOf(received, key);
    const handlers = routes.match(notification);
    if (traced) describeDelivery(traced, notification, delivery, handlers.length);
    if (handlers.length === 0) return 'ignored';
    const runs = routes.hasInline ? partRuns(handlers, key, part) : undefined;
    if (runs?.length === 0) return 'ignored';
    if (ordering?.isStale(notification)) {
      if (!onStale) return 'stale';
      // Once per notification, as every handler: a stale copy redelivered, or one handled before it became stale,
      // is a duplicate.
      const stale: Route<C>[] = [{ id: 'onStale', run: onStale }];
      const outcome = once.run({ key, handlers: stale, notification, context, delivery, signal });
      return Promise.resolve(outcome).then((ran) => (ran === 'duplicate' ? 'duplicate' : 'stale'));
    }
    if (runs !== undefined) {
      const work = (run: PartRun<C>) => ({
        ...run,
        notification,
        context,
        delivery: { ...delivery, key: run.key },
        signal,
        within,
      });
      return runInOrder(runs.map(work), once).then((ran) => recorded(notification, ran));
    }
    const outcome = once.run({ key, handlers, notification, context, delivery, signal });
    return isPromiseLike(outcome)
      ? outcome.then((ran) => recorded(notification, ran))
      : recorded(notification, outcome);
  };
}

/** The parts' runs one after the other: `duplicate` only when each was. */
async function runInOrder<C>(works: Work<C>[], once: ExactlyOnce<C>): Promise<Outcome> {
  let outcome: Outcome = 'duplicate';
  for (const work of works) if ((await once.run(work)) === 'handled') outcome = 'handled';
  return outcome;
}
