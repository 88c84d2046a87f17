import { durabilityRefusal } from './durability-refusal.ts';
import { StreamingExecution } from './streaming-execution.ts';
import { StreamingUnion } from './streaming-union.ts';

/** A plan that can run durably (durability.ts): a streaming execution or a streaming UNION. */
export type DurablePlan = StreamingExecution | StreamingUnion;

export function isDurablePlan(plan: unknown): plan is DurablePlan {
  return plan instanceof StreamingExecution || plan instanceof StreamingUnion;
}

/** Why the plan cannot run durably, as a user-facing reason; undefined when it can. */
export function durablePlanRefusal(plan: DurablePlan): string | undefined {
  return plan instanceof StreamingUnion ? plan.durabilityRefusal() : durabilityRefusal(plan.program);
}
