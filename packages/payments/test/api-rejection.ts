import { ApiError } from '../src/reconcile/api-errors.js';

/** The `ApiError` `promise` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejected(promise: Promise<unknown>): Promise<ApiError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (outcome instanceof ApiError) return outcome;
  throw new Error(`expected an ApiError, got ${String(outcome)}`);
}
