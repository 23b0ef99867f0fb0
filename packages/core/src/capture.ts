// `@payhook/core/capture`: deliveries recorded as masked JSON lines, for `payhook replay` (`@payhook/testing`).
export type {
  CapturedDelivery,
  CaptureFacts,
  CaptureOptions,
  DeliveryCapture,
} from './diagnostics/capture.js';
export { createCapture, DEFAULT_MASKED_FIELDS } from './diagnostics/capture.js';
export { createMasker } from './diagnostics/capture-mask.js';
