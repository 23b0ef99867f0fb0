export { PayhookInstrumentation, type PayhookInstrumentationConfig } from './instrumentation.js';
export { ATTRIBUTES, METRICS } from './names.js';
