/** Fields a debugging printout must never show in full. */
const MASKED = new Set(['cc_token', 'cc_number', 'card_cvv', 'cc_cvv']);

/** `abcd…wxyz (64 chars)`; short or secret-grade values become `****`. */
function maskValue(field: string, value: unknown): unknown {
  if (typeof value !== 'string' && typeof value !== 'number') return value === undefined ? value : '****';
  const text = String(value);
  if (field === 'card_cvv' || field === 'cc_cvv' || text.length < 12) return '****';
  if (field === 'cc_number') return `${text.slice(0, 6)}${'*'.repeat(text.length - 10)}${text.slice(-4)}`;
  return `${text.slice(0, 4)}…${text.slice(-4)} (${text.length} chars)`;
}

/** A copy of a decoded notification with card tokens and card data masked, at any depth. */
export function maskNotification(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskNotification);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] = MASKED.has(key) ? maskValue(key, field) : maskNotification(field);
  }
  return out;
}
