import type { ResultColumn } from '../queries/query-types.ts';
import type { AggregateSplit } from './aggregate-split.ts';
import type { DedupProgram } from './dedup-state.ts';
import type { EmitPolicy } from './emit-policy.ts';
import type { TailVariant } from './join-inputs.ts';
import type { JoinProgram } from './join-program.ts';
import type { SessionProgram } from './session-planner.ts';
import type { SqlTemplate } from './sql-template.ts';
import type { BoundSource, DerivedSource } from './stream-bindings.ts';
import type { WindowShape } from './watermark.ts';
import type { WindowInterval } from './window-interval.ts';

/** Everything the executor needs to run one streaming query, decided at plan time. */
export interface StreamingProgram {
  readonly shape: 'tail' | 'global' | 'window';
  readonly sources: readonly BoundSource[];
  /** Per source: rows with `_tp_sn <= startAfter[i]` are not read (-1 reads from the beginning). */
  readonly startAfter: readonly number[];
  /** The query starts in the past (rewind predicate or seek_to): its first rows are a backfill. */
  readonly backfill: boolean;
  readonly policy: EmitPolicy;
  /** The query ends once this many rows were emitted. */
  readonly limit?: number;
  /** The header as the client sees it. */
  readonly header: ResultColumn[];
  /** Tail: the SQL reading a range and producing result rows. */
  readonly tail?: SqlTemplate;
  /**
   * Variants of the tail a step part may ask for (join-inputs.ts): `inner`, a LEFT JOIN of two
   * streams joined INNER; `initial`, the first step over a kv stream (its latest row per key).
   */
  readonly tailVariants?: Partial<Record<TailVariant, SqlTemplate>>;
  /** Engine tables holding `table(s)` sides of joins as the query started (dropped at its end). */
  readonly snapshots?: readonly string[];
  /** Joins of streams: how each step fills its SQL per part (join-inputs.ts). */
  readonly join?: JoinProgram;
  /** Tail with lag()/lags(): reads each lagged expression's last values of a range, newest first. */
  readonly lags?: {
    readonly carry: SqlTemplate;
    readonly depths: readonly number[];
    /** Per substream (PARTITION BY): the carry query's first column is the substream key. */
    readonly keyed: boolean;
  };
  /** Aggregations. */
  readonly aggregation?: AggregationProgram;
  /** Session-window aggregations. */
  readonly session?: SessionProgram;
  /** EMIT CHANGELOG: where `_tp_delta` goes in the output row (the engine does not produce it). */
  readonly changelog?: { readonly deltaIndex: number };
  /** Nested streaming queries whose output this query reads (derived sources). */
  readonly children: readonly ChildProgram[];
  /** dedup() calls over range reads: their key tables are kept before each step. */
  readonly dedups?: readonly DedupProgram[];
}

/** A nested streaming query and the engine table its output goes to. */
export interface ChildProgram {
  readonly source: DerivedSource;
  readonly program: StreamingProgram;
  /** CREATE TABLE statement of the derived table (the child's columns plus `_tp_sn`, `_tp_time`). */
  readonly createTable: string;
}

export interface AggregationProgram {
  readonly split: AggregateSplit;
  /** Emitted rows end with `[substream key, emit version]` (emit_version() per substream/window). */
  readonly versioned: boolean;
  /** Fold a range into partial states; `__TRB_WM__` (late filter) and `__TRB_BATCH__` are filled per batch. */
  readonly fold: SqlTemplate;
  /** The same fold over no rows: creates the state table with the right column types. */
  readonly emptyFold: string;
  /** Emit: reads `__TRB_STATE__` filtered by `__TRB_EMIT_FILTER__`; `__TRB_EMIT_VERSION__` per emit. */
  readonly emit: SqlTemplate;
  /** One row per group with merged states, from a table given at run time (compaction). */
  readonly compact: (table: string) => string;
  /**
   * Compaction folds JavaScript aggregate values into serialized states (src/udf/uda-state.ts):
   * the table is compacted before each checkpoint, which then copies the states, not the values.
   */
  readonly compactBeforeCheckpoint?: boolean;
  /**
   * Retracting aggregations with EMIT CHANGELOG: the group keys (`__trb_gk`, as text) among the
   * state rows matching `__TRB_EMIT_FILTER__` in `__TRB_STATE__` that have no live row left; each
   * emit retracts their last row (retracting-input.ts).
   */
  readonly goneGroups?: SqlTemplate;
  readonly window?: {
    readonly shape: WindowShape;
    readonly delay?: WindowInterval;
    /** Per range: `[substream key, largest event time (Int64 ns, as text)]` of the window source's rows. */
    readonly maxTime: SqlTemplate;
    /**
     * A window over one stream read directly: lateness judged insert by insert inside a step.
     * `maxTime`: per range `[substream key, insert index, largest event time]`, the index being
     * what `__TRB_COMMIT__` computes from `_tp_sn`; `timeNsSql`: the event time (Int64 ns) over
     * the stream's columns, for the late filter `__TRB_LATE__` of the stream's range read.
     */
    readonly insertLate?: { readonly maxTime: SqlTemplate; readonly timeNsSql: string };
    /** The substream key over the state table's columns (engine SQL). */
    readonly stateKeySql: string;
    /** The substream key over the window source's columns, as the fold sees them (engine SQL). */
    readonly sourceKeySql: string;
    /**
     * The window reads one stream with several shards (and no PARTITION BY): `sourceKeySql` is
     * the row's shard, each shard keeps its own watermark and windows close at the smallest
     * (shard-watermarks.ts). Rows late in their shard are left out in the stream's range read
     * (`__TRB_LATE__`: `timeNsSql` against the shard's watermark), where `_tp_shard` is.
     */
    readonly shards?: { readonly count: number; readonly timeNsSql: string };
  };
}
