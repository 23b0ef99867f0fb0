import { ApiError } from './api-errors.js';

/**
 * The registration hook the API client calls around each create: what it needs of a payment watch
 * (`createPaymentWatch` returns one), so the client does not depend on the watch.
 */
export interface PaymentRegistry {
  /** Records the payment before its create is sent; `false` when it was registered already. */
  register(payment: { orderId: string; operation: string }): Promise<boolean>;
  /** Drops a payment whose create the service refused. */
  forget(orderId: string, operation?: string): Promise<void>;
}

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
