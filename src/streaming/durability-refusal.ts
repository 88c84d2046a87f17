import type { StreamingProgram } from './streaming-program.ts';

/**
 * Why a streaming program cannot run durably (durability.ts), as a user-facing reason; undefined
 * when it can. A durable run must rebuild every piece of state a step depends on from a
 * checkpoint; the shapes below keep state the executor does not checkpoint yet.
 */
export function durabilityRefusal(program: StreamingProgram, nestedStores = true): string | undefined {
  if (program.children.length > 0 && !nestedStores)
    return 'a checkpointed query cannot read a nested streaming query (a subquery over a stream); make the subquery a materialized view and read that';
  // An enrichment whose right side is read from the streams by sequence range (ASOF / LATEST
  // joins, join-program.ts EnrichJoin) keeps its state in its inputs' checkpointed state; one with
  // engine tables (kept right rows) or changelog sides does not yet.
  const join = program.join;
  if ((join?.kind === 'enrich' && (join.kept || join.states)) || join?.kind === 'changelog')
    return 'a checkpointed query cannot join versioned_kv or changelog_kv streams yet (ASOF and LATEST joins, and enrichment without kept rows, can be checkpointed)';
  // Nested queries run durably each with its own nested store (durability.ts).
  for (const child of program.children) {
    const refusal = durabilityRefusal(child.program, nestedStores);
    if (refusal) return refusal;
  }
  return undefined;
}
