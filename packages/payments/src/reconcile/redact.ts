const REDACTED = '[redacted]';

/**
 * Shapes of credentials whatever their value: an `X-API-AUTH` or `X-API-KEY` header written out (name, `:` or
 * `=`, then its value, and the `<KEY>:<SIGNATURE>` part of a scheme word followed by one), any scheme's
 * `<WORD>-HMAC-SHA256 <key>:<signature>`, and a hex digest as long as a request signature.
 */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /\bx-api-(?:auth|key)["']?\s*[:=]\s*["']?[^\s"',;]+(?:\s+[^\s"',;]*:[^\s"',;]*)?/gi,
  /\b[a-z0-9-]*-HMAC-SHA256\s+[^\s"',;]+/gi,
  /\b[0-9a-f]{40,}\b/gi,
];

/**
 * A function that takes text the service sent (an error body echoing the request, say) and returns it with every
 * credential given, and anything shaped like one, replaced by `[redacted]`. Values are matched without regard to
 * case and also percent-encoded; the longest first, so a secret holding a key is not left half shown. Run it
 * before any cut: a credential cut in two would slip past.
 */
export function createRedactor(
  credentials: readonly (string | undefined)[],
): (text: string, more?: readonly string[]) => string {
  const known = credentials.filter((c): c is string => typeof c === 'string');
  return (text, more = []) => {
    const literals = literalPattern([...known, ...more]);
    let out = literals ? text.replace(literals, REDACTED) : text;
    for (const shape of CREDENTIAL_SHAPES) out = out.replace(shape, REDACTED);
    return out;
  };
}

function literalPattern(values: readonly string[]): RegExp | undefined {
  const forms = new Set<string>();
  for (const value of values) {
    if (value === '') continue;
    forms.add(value);
    forms.add(encodeURIComponent(value));
  }
  if (forms.size === 0) return undefined;
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
}
