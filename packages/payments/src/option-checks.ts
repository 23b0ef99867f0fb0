import { createOptionChecks } from '@payhook/core/adapter';

// The payments package's option checks: core's, each error naming this package (`[@payhook/payments] … must be …`).
export const {
  duration,
  nonEmptyString,
  objectWith,
  optionalFunction,
  optionError,
  positive,
  positiveInteger,
} = createOptionChecks('@payhook/payments');
