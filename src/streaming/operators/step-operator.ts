import type { StepPart } from '../join-inputs.ts';
import type { ResultSink } from '../result-sink.ts';
import type { SavedState } from './saved-state.ts';

/** One step of an operator: the ranges it covers and the rows it reads. */
export interface StepArgs {
  /** The step's template values: each source's range (`P.lo`/`P.hi`/`P.start`) and flags. */
  readonly values: Record<string, number>;
  /** What the step reads: the sources' new ranges, or a join's parts (join-inputs.ts). */
  readonly parts: readonly StepPart[];
  readonly sink: ResultSink;
  /** A step of the backfill: watermarks are muted and nothing is emitted. */
  readonly backfill: boolean;
  /** Where commits ended inside the range of a windowed step over several inserts of one stream. */
  readonly cuts: readonly number[];
}

/**
 * The shape of a streaming query (DESIGN.md §5) behind one interface: a tail, an aggregation
 * (global or windowed, with its watermark), a session window. The execution (streaming-execution.ts)
 * owns the loop, the sources' cursors, the join inputs and durability; it hands each event to its
 * operator. A new shape is a new operator file, not new branches in the loop.
 */
export interface StepOperator {
  /** The shape's engine tables, created before the first step. */
  open(): Promise<void>;
  /** Process one step; answers whether rows reached the result (a join that met nothing: false). */
  step(args: StepArgs): Promise<boolean>;
  /** The backfill is over: emit what it made final. */
  backfillEnd(sink: ResultSink): Promise<void>;
  /** Whether the shape emits on a periodic tick at all. */
  readonly emitsOnTick: boolean;
  /** A periodic tick with rows since the last one. */
  periodic(sink: ResultSink): Promise<void>;
  /** EMIT ... TIMEOUT: no rows for the timeout; what is open is final. */
  timeout(sink: ResultSink): Promise<void>;
  /** Bring the shape's engine tables to the form a checkpoint saves. */
  beforeCheckpoint(): Promise<void>;
  /** The engine tables a checkpoint saves, by a name stable across runs. */
  tables(): Record<string, string>;
  /** Fill the shape's engine tables back from a checkpoint's saved `tables`. */
  restoreTables(tables: Readonly<Record<string, string>>): Promise<void>;
  /** The in-memory state a later step depends on (the checkpoint's JSON). */
  save(): Partial<SavedState>;
  restore(saved: SavedState): void;
  /** Drop the shape's engine tables (the query ended). */
  close(): Promise<void>;
}

/** No-op defaults for the hooks a shape without engine tables or end-of-phase emits does not need. */
export abstract class OperatorHooks {
  async open(): Promise<void> {}
  async backfillEnd(_sink: ResultSink): Promise<void> {}
  async beforeCheckpoint(): Promise<void> {}
  tables(): Record<string, string> {
    return {};
  }
  async restoreTables(_tables: Readonly<Record<string, string>>): Promise<void> {}
  async close(): Promise<void> {}
}
