import { deliveryMessage, describeDelivery, publishRefusal, traceDelivery } from '../diagnostics/channels.js';
import type { DeliveryMessage } from '../diagnostics/messages.js';
import { ERROR_STATUS, type WebhookError } from '../errors.js';
import type { ProcessOptions, WebhookHandler } from '../handler.js';
import { asWebhookError, type WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import type { ResolvedOptions } from '../options.js';
import { factsOf, type Received } from './delivery.js';
import type { Enqueuer } from './enqueue.js';
import type { ExactlyOnce, Outcome, Work } from './exactly-once.js';
import { type Ledgered, ledgered, unwrapLedgerFailure, type WebhookLedger } from './ledger.js';
import { type Part, type PartRun, partRuns, type Routes } from './routes.js';

/**
 * `webhook.process`: the processor outside a request, its refusals reported and thrown, traced when anyone listens.
 * With `enqueue` and a webhook that has a queue, the notification is handed to it as a delivery would be.
 */
export function createProcess<C>(
  processNotification: Processor<C>,
  report: (error: WebhookError, remoteAddress: string | undefined) => void,
  enqueuer?: Enqueuer<C>,
): WebhookHandler<C>['process'] {
  const processOne = async (received: Received<C>, part: Part, viaQueue: boolean): Promise<Taken> => {
    try {
      return await (viaQueue && enqueuer ? enqueuer(received) : processNotification(received, part));
    } catch (error) {
      const known = asWebhookError(error);
      report(known, undefined);
      publishRefusal('process', known.code, known.status);
      throw known;
    }
  };
  const process = (notification: Notification, context?: C, processOptions?: ProcessOptions) => {
    const { secretIndex = -1, secretId, signal, queued, enqueue } = processOptions ?? {};
    const received = { notification, context: context as C, secretIndex, secretId, signal };
    const part: Part = queued === true ? 'queued' : 'all';
    const viaQueue = enqueue === true && queued !== true;
    const traced = deliveryMessage('process');
    if (traced === undefined) return processOne(received, part, viaQueue);
    return traceDelivery(traced, () => processOne({ ...received, traced }, part, viaQueue), finishProcess);
  };
  return process as WebhookHandler<C>['process'];
}

/** How `process` took a notification: a delivery's 200 outcomes (a queue's with `enqueue`). */
type Taken = Exclude<WebhookOutcome, 'refused'>;

function finishProcess(message: DeliveryMessage, outcome: Taken | undefined, error: unknown): void {
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
 * with inline and queued handlers: `part` says which, `within` runs in the inline part's transaction). With a
 * `ledger`, the run of the notification's own key records it first (protocol/ledger.ts): a stale or conflicting
 * notification runs no handler, answered 200 `stale` or `conflict`, and its queued part is not queued.
 */
export function createProcessor<C>(
  options: Pick<ResolvedOptions<C>, 'ledger'>,
  routes: Routes<C>,
  keyFor: (notification: Notification) => string | undefined,
  once: ExactlyOnce<C>,
): Processor<C> {
  const { ledger } = options;
  return (received, part = 'all', within) => {
    const { notification, context, traced, signal } = received;
    const key = keyFor(notification);
    const delivery = factsOf(received, key);
    const handlers = routes.match(notification);
    if (traced) describeDelivery(traced, notification, delivery, handlers.length);
    if (ledger === undefined) {
      if (handlers.length === 0) return 'ignored';
      // The common delivery (`pnpm bench`'s hot path): one run, nothing built for parts.
      if (!routes.hasInline) {
        // A worker's queued handlers: each a step of its own (`Work.steps`), where the store can.
        const steps = part === 'queued';
        return once.run({ key, handlers, notification, context, delivery, signal, steps });
      }
    }
    const runs = routes.hasInline
      ? partRuns(handlers, key, part)
      : [{ handlers, key, steps: part === 'queued' }];
    if (runs.length === 0) return 'ignored';
    const work = (run: PartRun<C>): Work<C> => ({
      ...run,
      notification,
      context,
      delivery: { ...delivery, key: run.key },
      signal,
      within,
    });
    if (ledger !== undefined) return runLedgered(ledger, runs.map(work), key, once);
    return runs.length > 1 ? runInOrder(runs.map(work), once) : once.run(work(runs[0]!));
  };
}

/**
 * The runs behind the ledger: the one of the notification's own key records it (a worker's queued part, under
 * `key#queued`, was recorded by the request's inline part); a stale or conflicting decision ends there.
 */
async function runLedgered<C>(
  ledger: WebhookLedger,
  works: Work<C>[],
  key: string | undefined,
  once: ExactlyOnce<C>,
): Promise<Processed> {
  let outcome: Outcome = 'duplicate';
  for (const work of works) {
    const recording: Ledgered<C> | undefined = work.key === key ? ledgered(ledger, work.handlers) : undefined;
    let ran: Outcome;
    try {
      // The outbox's job (`within`, after the handlers in the inline part's transaction) only for a notification
      // the ledger let through: a stale one's queued part must not run in a worker either.
      const { within } = work;
      const gated = within && recording && { within: (tx: unknown) => gatedWithin(recording, within, tx) };
      ran = await once.run(recording ? { ...work, ...gated, handlers: [recording.route] } : work);
    } catch (error) {
      throw unwrapLedgerFailure(error);
    }
    const decided = recording?.decided();
    if (decided === 'stale' || decided === 'conflict') return decided;
    if (ran === 'handled') outcome = 'handled';
  }
  return outcome;
}

function gatedWithin<C>(
  recording: Ledgered<C>,
  within: (transaction: unknown) => Promise<unknown>,
  transaction: unknown,
): Promise<unknown> {
  return recording.decided() === 'handle' ? within(transaction) : Promise.resolve();
}

/** The parts' runs one after the other: `duplicate` only when each was. */
async function runInOrder<C>(works: Work<C>[], once: ExactlyOnce<C>): Promise<Outcome> {
  let outcome: Outcome = 'duplicate';
  for (const work of works) if ((await once.run(work)) === 'handled') outcome = 'handled';
  return outcome;
}
