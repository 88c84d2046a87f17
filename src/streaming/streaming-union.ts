import { err } from '../errors/tributary-error.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { QueryAnalysis, ResultColumn } from '../queries/query-types.ts';
import type { Durability } from './durability.ts';
import { durabilityRefusal } from './durability-refusal.ts';
import type { ExecutionProgress, PipelineStep, ResultSink } from './result-sink.ts';
import type { StreamingExecution } from './streaming-execution.ts';

/**
 * A streaming `UNION [ALL]` (Proton's UNION keeps every row): each branch runs as its own
 * streaming execution into the same sink, in the columns of the first branch. Durably, each
 * branch has its own store nested in the union's (durability.ts) and tags its hand-overs with its
 * index, so a consumer that remembers tags (a materialized view's target) keeps one per branch.
 * A branch ending (its LIMIT) leaves the others running; a branch failing stops them all.
 */
export class StreamingUnion implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = true;
  readonly header: ResultColumn[];

  constructor(
    readonly branches: readonly StreamingExecution[],
    readonly analysis: QueryAnalysis,
  ) {
    const first = branches[0];
    if (!first) throw new Error('a UNION needs at least one branch');
    for (const b of branches)
      if (b.header.length !== first.header.length)
        throw err('INCORRECT_QUERY', {
          detail: `The branches of a UNION return different numbers of columns (${first.header.length} and ${b.header.length})`,
        });
    this.header = first.header;
  }

  /** Why the union cannot run durably (a branch's reason), or undefined. */
  durabilityRefusal(): string | undefined {
    for (const b of this.branches) {
      const r = durabilityRefusal(b.program);
      if (r) return r;
    }
    return undefined;
  }

  async run(sink: ResultSink, signal: AbortSignal, durability?: Durability): Promise<void> {
    const store = durability?.store;
    if (durability && !store?.nested)
      throw err('NOT_IMPLEMENTED', { detail: 'a checkpointed UNION needs a store for each branch' });
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) abort.abort();
    let failure: unknown;
    try {
      await Promise.all(
        this.branches.map((b, i) => {
          const into: ResultSink = {
            rows: (rows, tag) => sink.rows(rows, tag ? { ...tag, branch: i } : undefined),
          };
          const nested =
            durability && store?.nested
              ? { store: store.nested(i), checkpointIntervalMs: durability.checkpointIntervalMs }
              : undefined;
          return b.run(into, abort.signal, nested).catch((e: unknown) => {
            failure ??= e;
            abort.abort();
          });
        }),
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (failure !== undefined) throw failure;
  }

  progress(): ExecutionProgress {
    const all = this.branches.map((b) => b.progress());
    return {
      scannedRows: all.reduce((s, p) => s + p.scannedRows, 0),
      scannedBytes: all.reduce((s, p) => s + p.scannedBytes, 0),
      lastEventTime: Math.max(0, ...all.map((p) => p.lastEventTime)),
      sources: all.flatMap((p) => p.sources ?? []),
    };
  }

  /** Per source stream key: the least `_tp_sn` processed by any branch reading it. */
  processedSn(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const b of this.branches)
      for (const [k, sn] of Object.entries(b.processedSn())) out[k] = Math.min(out[k] ?? sn, sn);
    return out;
  }

  pipeline(): PipelineStep[] {
    const out: PipelineStep[] = [];
    for (const b of this.branches) {
      const base = out.length;
      for (const s of b.pipeline())
        out.push({ ...s, id: s.id + base, inputs: s.inputs.map((i) => i + base) });
    }
    return out;
  }

  async dispose(): Promise<void> {
    for (const b of this.branches) await b.dispose();
  }
}
