import type { ScenarioStep, StepKind } from './types.js';

/** Every kind of step, in the order the docs list them. */
export const STEP_KINDS: readonly StepKind[] = [
  'create',
  'pay',
  'threeDs',
  'decline',
  'capture',
  'void',
  'refund',
  'advance',
  'chargeOutcomes',
  'reconcile',
  'inject',
  'redeliver',
  'release',
  'check',
];

/** The keys any step may carry besides its kind. */
export const COMMON_KEYS: readonly string[] = ['name', 'faults', 'expect'];

/** The step's kind: the one key of `STEP_KINDS` it carries. */
export function kindOf(step: ScenarioStep): StepKind {
  return STEP_KINDS.find((kind) => kind in step)!;
}

/** The payment a step acts on, by its scenario name. */
function paymentOf(step: ScenarioStep): string | undefined {
  const body = (step as unknown as Record<string, unknown>)[kindOf(step)];
  if (body === null || typeof body !== 'object') return undefined;
  const named = body as { payment?: unknown; as?: unknown };
  const name = named.as ?? named.payment;
  return typeof name === 'string' ? name : undefined;
}

/** How the timeline names a step: its `name`, else its kind, payment and main value (`refund order 25`). */
export function describeStep(step: ScenarioStep): string {
  if (step.name) return step.name;
  const kind = kindOf(step);
  const body = (step as unknown as Record<string, unknown>)[kind];
  if (typeof body !== 'object' || body === null) return `${kind} ${String(body)}`;
  const parts: string[] = [kind];
  const payment = paymentOf(step);
  if (payment) parts.push(payment);
  for (const [key, value] of Object.entries(body)) {
    if (key === 'as' || key === 'payment' || key === 'fields') continue;
    parts.push(`${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  }
  const faults = step.faults ? Object.entries(step.faults).map(([k, v]) => `${k}=${String(v)}`) : [];
  return faults.length > 0 ? `${parts.join(' ')} [faults ${faults.join(' ')}]` : parts.join(' ');
}
