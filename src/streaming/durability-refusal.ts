import type { StreamingProgram } from './streaming-program.ts';

/**
 * Why a streaming program cannot run durably (durability.ts), as a user-facing reason; undefined
 * when it can. A durable run must rebuild every piece of state a step depends on from a
 * checkpoint; the shapes below keep state the executor does not checkpoint yet.
 */
export function durabilityRefusal(program: StreamingProgram): string | undefined {
  if (program.children.length > 0)
    return 'a checkpointed query cannot read a nested streaming query (a subquery over a stream); make the subquery a materialized view and read that';
  // A join's kept sides (join-side-state.ts) are rebuilt from the streams when a run is restored;
  // `table()` snapshots, taken when the query starts, are not.
  const join = program.join;
  const kept = new Set(
    join?.kind === 'enrich' || join?.kind === 'changelog' ? (join.kept ?? []).map((k) => k.table) : [],
  );
  if ((program.snapshots ?? []).some((t) => !kept.has(t)))
    return 'a checkpointed query cannot join table() snapshots yet (the snapshot is taken when the query starts)';
  return undefined;
}
