import { isMissing } from '@payhook/core/adapter';
import { isValidAmount } from './formats.js';
import { isAbsent, path, type Violations } from './violations.js';

export type Format = readonly [test: (text: string) => boolean, code: string, expected: string];

export interface StringRule {
  required?: boolean;
  /** Measured in UTF-16 code units (`String#length`): never shorter than the count in code points. */
  maxLength?: number;
  format?: Format;
  oneOf?: readonly string[];
}

export function checkString(
  v: Violations,
  record: Record<string, unknown>,
  key: string,
  prefix: string,
  rule: StringRule = {},
): string | undefined {
  const field = path(prefix, key);
  const value = record[key];
  if (rule.required && isMissing(value)) {
    v.add(field, 'required', `${field} is required.`);
    return undefined;
  }
  if (isAbsent(value)) return undefined;
  if (typeof value !== 'string') {
    v.add(field, 'type', `${field} must be a string.`);
    return undefined;
  }
  if (rule.maxLength !== undefined && value.length > rule.maxLength) {
    v.add(field, 'max_length', `${field} must be at most ${rule.maxLength} characters.`);
  }
  if (rule.oneOf && !rule.oneOf.includes(value)) {
    v.add(field, 'enum', `${field} must be one of: ${rule.oneOf.join(', ')}.`);
  }
  if (rule.format && !rule.format[0](value)) {
    v.add(field, rule.format[1], `${field} must be ${rule.format[2]}.`);
  }
  return value;
}

export function checkAmount(
  v: Violations,
  value: unknown,
  field: string,
  required: boolean,
): number | undefined {
  if (isMissing(value)) {
    if (required) v.add(field, 'required', `${field} is required.`);
    return undefined;
  }
  if (typeof value !== 'number') {
    v.add(field, 'type', `${field} must be a JSON number.`);
    return undefined;
  }
  if (!isValidAmount(value)) {
    v.add(field, 'amount.invalid', `${field} must be positive with at most 2 decimal digits.`);
    return undefined;
  }
  return value;
}

export function checkInteger(
  v: Violations,
  value: unknown,
  field: string,
  range: { required?: boolean; min: number; max?: number },
): number | undefined {
  if (isMissing(value)) {
    if (range.required) v.add(field, 'required', `${field} is required.`);
    return undefined;
  }
  if (typeof value !== 'number') {
    v.add(field, 'type', `${field} must be a JSON number.`);
    return undefined;
  }
  if (!Number.isInteger(value)) {
    v.add(field, 'integer', `${field} must be a whole number.`);
    return undefined;
  }
  if (value < range.min) {
    v.add(field, 'min', `${field} must be at least ${range.min}.`);
    return undefined;
  }
  if (range.max !== undefined && value > range.max) {
    v.add(field, 'max', `${field} must be at most ${range.max}.`);
    return undefined;
  }
  return value;
}
