/** Whether a field counts as not sent: absent, `null`, or the empty string (how forms and plugins leave one out). */
export function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}
