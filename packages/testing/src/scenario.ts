// `@payhook/testing/scenario`: whole payment lives as tests. A scenario (a YAML or JSON file, its JSON Schema at
// `@payhook/testing/scenarios/scenario.schema.json`, or `defineScenario`) runs over a seeded fake service whose webhooks reach
// the app over HTTP, with delivery faults per step and expectations checked as it goes.
export { builtInScenarios } from './scenario/builtins.js';
export { defineScenario } from './scenario/define.js';
export type { FaultKind, PlacedFault } from './scenario/draw.js';
export type { ExploreFailure, ExploreOptions, ExploreResult } from './scenario/explore.js';
export { exploreScenario } from './scenario/explore.js';
export { loadScenario, parseScenario, serializeScenario } from './scenario/load.js';
export { runScenario } from './scenario/runner.js';
export { formatTimeline } from './scenario/timeline.js';
export type {
  AdvanceStep,
  CaptureStep,
  ChargeOutcomesStep,
  CheckStep,
  CreatePayment,
  CreateStep,
  DeclineStep,
  Expectations,
  HttpExpectation,
  InjectStep,
  LedgerExpectation,
  PayStep,
  ReconcileStep,
  RedeliverStep,
  RefundStep,
  ReleaseStep,
  RunScenarioOptions,
  Scenario,
  ScenarioCard,
  ScenarioDuration,
  ScenarioFailure,
  ScenarioRun,
  ScenarioStep,
  ScenarioSubscription,
  StepFaults,
  StepKind,
  ThreeDsStep,
  TimelineEntry,
  VoidStep,
  WebhookExpectation,
} from './scenario/types.js';
export { ScenarioError } from './scenario/validate.js';
