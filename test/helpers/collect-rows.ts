import type { RowsPlan } from '../../src/queries/execution.ts';
import type { ResultSink } from '../../src/streaming/result-sink.ts';

/** A streaming plan running in-process into an array of parsed rows. */
export interface CollectingRun {
  readonly rows: unknown[][];
  readonly stop: AbortController;
  /** Settles when the run ends (after `stop.abort()`, or by itself). */
  readonly done: Promise<void>;
}

/** Run `plan` with a sink that parses each row into `rows` (and hands each batch to `onBatch`). */
export function runCollecting(plan: RowsPlan, onBatch?: (rows: readonly string[]) => void): CollectingRun {
  const rows: unknown[][] = [];
  const stop = new AbortController();
  const sink: ResultSink = {
    rows: (batch) => {
      onBatch?.(batch);
      for (const r of batch) rows.push(JSON.parse(r) as unknown[]);
    },
  };
  return { rows, stop, done: plan.run(sink, stop.signal) };
}
