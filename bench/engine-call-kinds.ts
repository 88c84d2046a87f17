import type { Engine } from '../src/engine/engine.ts';

/** Engine calls of one kind: how many, their engine-reported ms, and their wall ms (incl. waiting). */
export interface CallKind {
  n: number;
  engineMs: number;
  wallMs: number;
}

/**
 * Diagnostics for benches: counts every `query` and `insert` of `engine` by statement kind (its
 * first 40 characters with digits folded; inserts by table name with digits folded). `reset`
 * starts a new period; `report` prints the period's kinds, the largest wall time first.
 */
export function countEngineCalls(engine: Engine): { reset(): void; report(seconds: number): string } {
  let kinds = new Map<string, CallKind>();
  const add = (kind: string, engineMs: number, wallMs: number) => {
    const k = kinds.get(kind) ?? { n: 0, engineMs: 0, wallMs: 0 };
    k.n++;
    k.engineMs += engineMs;
    k.wallMs += wallMs;
    kinds.set(kind, k);
  };
  const fold = (s: string) => s.replace(/\d+/g, '#');
  const query = engine.query.bind(engine);
  engine.query = async (...a) => {
    const t0 = performance.now();
    const r = await query(...a);
    add(`query ${fold(String(a[0]).slice(0, 40))}`, r.elapsedMs, performance.now() - t0);
    return r;
  };
  const insert = engine.insert.bind(engine);
  engine.insert = async (...a) => {
    const t0 = performance.now();
    const r = await insert(...a);
    add(`insert ${fold(a[0])}`, r.elapsedMs, performance.now() - t0);
    return r;
  };
  return {
    reset: () => {
      kinds = new Map();
    },
    report: (seconds) =>
      [...kinds]
        .sort((a, b) => b[1].wallMs - a[1].wallMs)
        .map(
          ([kind, k]) =>
            `  ${(k.n / seconds).toFixed(1).padStart(7)}/s  engine ${(k.engineMs / seconds).toFixed(0).padStart(5)} ms/s  wall ${(k.wallMs / seconds).toFixed(0).padStart(5)} ms/s  ${kind}`,
        )
        .join('\n'),
  };
}
