import { ApiError } from '../reconcile/api-errors.js';
import type { PaymentWatch } from './watch.js';

/** What the API client needs of a watch. */
export type PaymentRegistry = Pick<PaymentWatch, 'register' | 'forget'>;

/**
 * Sends a create with its payment watched from before it leaves: a process that dies between the service's answer
 * and the registration cannot lose it, and a create that timed out (the payment may exist) stays watched. A
 * refusal the service answered (a 4xx but 409, whose order exists) is forgotten again.
 */
export async function sendWatched<T>(
  watch: PaymentRegistry | undefined,
  request: object,
  split: boolean,
  send: () => Promise<T>,
): Promise<T> {
  if (watch === undefined) return send();
  const { order_id: orderId, method } = request as { order_id?: unknown; method?: unknown };
  const operation = split || typeof method !== 'string' ? 'purchase' : method;
  // A second create of an order already watched leaves the first's entry alone, even when it is refused.
  const added = await watch.register({ orderId: String(orderId), operation });
  try {
    return await send();
  } catch (error) {
    const status = error instanceof ApiError ? error.status : undefined;
    if (added && status !== undefined && status >= 400 && status < 500 && status !== 409) {
      await watch.forget(String(orderId), operation).catch(() => undefined);
    }
    throw error;
  }
}
