/**
 * C0, DEL and C1 controls, the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the line and
 * paragraph separators, and UTF-16 surrogates without their pair.
 */
const UNPRINTABLE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text a sender wrote (a method, a field name, an order id, a service's message), as a log line or a metric's
 * attribute may carry it: cut to `max` characters (then `…`), and every control, bidi or separator character and
 * lone surrogate written as `\u{…}`, so it can neither split a line, reorder what a person reads (U+202E) nor
 * reach a terminal as a command.
 *
 * @example
 * logger.warn(`a ${printable(notification.method, 64)} notification …`);
 */
export function printable(text: string, max = Number.POSITIVE_INFINITY): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return cut.replace(UNPRINTABLE, (char) => `\\u{${char.charCodeAt(0).toString(16)}}`);
}
