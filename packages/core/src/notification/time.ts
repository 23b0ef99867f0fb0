const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;

/**
 * Reads one of the service's timestamps (`YYYY-MM-DDTHH:MM:SS[.fff]`, no zone given) as UTC, explicitly.
 * A timestamp that carries its own zone is read with that zone. Returns `undefined` for anything unreadable.
 *
 * @example
 * parseTimestamp(notification.created_at)?.toISOString(); // '2026-11-22T10:15:00.000Z'
 */
export function parseTimestamp(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const text = ZONELESS.test(value) ? `${value.replace(' ', 'T')}Z` : value;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
