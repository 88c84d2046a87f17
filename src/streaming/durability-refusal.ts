import type { StreamingProgram } from './streaming-program.ts';

/**
 * Why a streaming program cannot run durably (durability.ts), as a user-facing reason; undefined
 * when it can. A durable run must rebuild every piece of state a step depends on from a
 * checkpoint; the shapes below keep state the executor does not checkpoint yet.
 */
export function durabilityRefusal(program: StreamingProgram, nestedStores = true): string | undefined {
  if (program.children.length > 0 && !nestedStores)
    return 'a checkpointed query cannot read a nested streaming query (a subquery over a stream); make the subquery a materialized view and read that';
  // A join's kept sides (join-side-state.ts) are rebuilt from the streams when a run is restored;
  // `table()` snapshots are saved with each checkpoint (streaming-execution.ts).
  // Nested queries run durably each with its own nested store (durability.ts).
  for (const child of program.children) {
    const refusal = durabilityRefusal(child.program, nestedStores);
    if (refusal) return refusal;
  }
  return undefined;
}
