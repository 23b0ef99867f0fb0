export type JsonProblem = 'not_json' | 'not_object';

/** The object a JSON text holds; otherwise throws what `refused` makes of the problem. */
export function parseJsonObject(
  text: string,
  refused: (problem: JsonProblem) => Error,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // No cause: V8's message quotes the text (a piece of the payload), and causes end up in logs.
    throw refused('not_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refused('not_object');
  return value as Record<string, unknown>;
}
