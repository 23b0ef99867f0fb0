import { UsageError } from './args.js';

const UNSAFE = new Set(['__proto__', 'prototype', 'constructor']);

/** `key=value` into a path and a value: JSON when it parses (`250`, `true`, `{"a":1}`), else the text itself. */
export function parseAssignment(assignment: string): { path: string[]; value: unknown } {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set expects key=value, got ${JSON.stringify(assignment)}.`);
  const path = assignment.slice(0, eq).split('.');
  if (path.some((part) => part === '' || UNSAFE.has(part))) {
    throw new UsageError(`--set key ${JSON.stringify(assignment.slice(0, eq))} is not a usable path.`);
  }
  const text = assignment.slice(eq + 1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  return { path, value };
}

/** Applies `--set` assignments to a copy of a notification; dotted paths create objects on the way. */
export function applyAssignments<T extends object>(notification: T, assignments: readonly string[]): T {
  const copy = structuredClone(notification) as Record<string, unknown>;
  for (const assignment of assignments) {
    const { path, value } = parseAssignment(assignment);
    let target = copy;
    for (const part of path.slice(0, -1)) {
      const next = target[part];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) target[part] = {};
      target = target[part] as Record<string, unknown>;
    }
    target[path[path.length - 1]!] = value;
  }
  return copy as T;
}
