/**
 * `handlers`, each passing what it throws to `caught`: Node.js rethrows a `diagnostics_channel` subscriber's error
 * as an uncaught exception, which ends the process before the delivery is answered (issue 34).
 */
export function guarded<T extends Record<string, (message: unknown) => void>>(
  caught: (error: unknown) => void,
  handlers: T,
): T {
  const safe: Record<string, (message: unknown) => void> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    safe[name] = (message) => {
      try {
        handler(message);
      } catch (error) {
        caught(error);
      }
    };
  }
  return safe as T;
}
