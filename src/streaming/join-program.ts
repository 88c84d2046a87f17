import type { LeftJoinTouch } from './join-left-touch.ts';
import type { JoinSideKind } from './join-side-read.ts';
import type { SqlTemplate } from './sql-template.ts';

/**
 * How a query that joins streams reads its sources at each step (decided at plan time). A step's
 * SQL is a template over the sequence ranges of the sources (`__TRB_LO_i__`, `__TRB_HI_i__`); a
 * join fills it once per *part*, and the step's rows are the union of the parts (join-inputs.ts).
 */
export type JoinProgram = ExpandJoin | EnrichJoin | RangeJoin | ChangelogJoin;

/**
 * A join of changelog inputs (INNER, any number of sides; HashJoin.h case 6 and its chains):
 * versioned_kv, changelog_kv and changelog streams and `changelog(s, key...)`, each side a
 * changelog of its state (join-side-read.ts). The join's changes are those of a product of
 * multisets: a step's parts are `dS1 ⋈ S2(lo) ⋈ ... + S1(hi) ⋈ dS2 ⋈ S3(lo) ... + ... + S1(hi) ⋈
 * ... ⋈ dSn`, where a kv side's `dS` is its replaced rows (-1) then its new rows (+1) of the keys
 * changed in the range, and a changelog side's `dS` its rows with their own `_tp_delta`. A row's
 * `_tp_delta` is the product of its sides' (0014 id 4, 0013_changelog_stream1 ids 30, 36, 38).
 */
export interface ChangelogJoin {
  readonly kind: 'changelog';
  /** Source indexes in join order, each with how it keeps its state. */
  readonly sides: readonly { readonly index: number; readonly kind: JoinSideKind }[];
  /** Each side's state, kept in an engine table that each step's new rows update. */
  readonly kept?: readonly KeptSide[];
  /**
   * Sides LEFT JOINed (two, or a chain mixing LEFT and INNER): a left side's change joins the right side as of the step's start (its
   * unmatched rows with the right side's defaults); a right side's change is the LEFT JOIN of the
   * left side's state with the right side as of the step's end less the same as of its start,
   * identical rows netted (join-left-netting.ts), so a left row's defaults row is retracted when a
   * right row comes to match it, and sent again when the last one goes. `deltaColumn`: the
   * query's `_tp_delta` column, if it selects one.
   */
  readonly leftJoin?: {
    readonly deltaColumn?: string;
    /**
     * Per side (join order), whether a LEFT JOIN attaches it: its changes are parts of the netted
     * difference above; the other sides' changes (the first side, INNER-joined sides) are linear
     * and join as in an INNER join (`a LEFT JOIN b LEFT JOIN c`, `a JOIN b LEFT JOIN c`).
     */
    readonly left: readonly boolean[];
    /**
     * One LEFT-attached side whose ON has equal keys with an earlier side: a change of it reads
     * only that side's rows with the keys the change touches (join-left-touch.ts), source indexes.
     */
    readonly touch?: LeftJoinTouch;
  };
  /**
   * Join alignment of two sides (`lag_behind`, join-changelog-alignment.ts): per side, the SQL of
   * its rows' `_tp_sn` and time (ns, as a string) in `(__TRB_LO_i__, __TRB_HI_i__]`, in sequence
   * order; a side's changes apply only once the other side's time allows (`lagNs`).
   */
  readonly align?: { readonly times: readonly [SqlTemplate, SqlTemplate]; readonly lagNs: bigint };
}

/**
 * A join side's state kept in an engine table (join-side-state.ts), so a step reads the state
 * (bounded by its keys, or by its net rows) instead of the side's whole history: the table holds
 * the state as of its last compaction plus the rows of the steps since. `append` adds the rows of
 * `(__TRB_LO_i__, __TRB_HI_i__]`; `compact` is the SELECT of its state (the latest row per key of a
 * `kv` side, each distinct row with its net count of a `rows` side). Rows with `_tp_sn <= after`
 * are no part of it (`changelog(s, key)` starts with its query).
 */
export interface KeptSide {
  readonly index: number;
  readonly kind: JoinSideKind;
  readonly table: string;
  readonly after: number;
  readonly append: SqlTemplate;
  readonly compact: string;
}

/**
 * Stream-to-stream joins without a time range (and a stream with itself), any number of streams:
 * both sides are kept (in their own streams, by sequence range), so the new rows of a step are
 * `dS1 ⋈ S2_old ⋈ ... + S1 ⋈ dS2 ⋈ S3_old ... + ... + S1 ⋈ ... ⋈ dSn` (DESIGN.md §5): source i's
 * part reads sources before it up to this step's end, itself over the new range, and sources
 * after it up to the previous step's end. Rows arriving on both sides in one step meet once.
 */
export interface ExpandJoin {
  readonly kind: 'expand';
  /** Source indexes in join order. */
  readonly sources: readonly number[];
  /** LEFT JOIN of two streams: parts triggered by right rows use the INNER template. */
  readonly leftJoin?: boolean;
}

/**
 * Append stream JOIN versioned_kv stream (dynamic enrichment, §1.9): only left rows make output;
 * the right side is read as its latest row per primary key among its rows up to this step. The
 * same with more sides and other changelog inputs on the right (`a JOIN changelog(b, k) JOIN
 * changelog_kv c`): each side after the first is its state as of this step (join-side-read.ts),
 * only the append stream's rows trigger output (0013_changelog_stream1 ids 25-35, stream2).
 */
export interface EnrichJoin {
  readonly kind: 'enrich';
  readonly left: number;
  readonly right: number;
  /** Sides read through join-side-read.ts as their state at their step end (right included then). */
  readonly states?: readonly number[];
  /**
   * Tables of the sides kept in the engine (join-side-state.ts): the versioned_kv right side of an
   * INNER / LEFT enrichment (its latest row per key), and the `states` sides.
   */
  readonly kept?: readonly KeptSide[];
  /**
   * Join alignment (`lag_behind`, join-alignment.ts): `rightTime` is `to_string(max(right time in
   * ns))` of the right side's rows in a step's range (`\\N` when none); a left row is joined once
   * the largest right time so far reaches its time minus `lagNs`. `pendingSn` is
   * `to_string(min(left _tp_sn))` of the left rows in a range whose time is past `__TRB_ALIGN_T__`
   * (`\\N` when none): the rows before it are all joined, so a step reads the left side from there.
   */
  readonly align?: {
    readonly rightTime: SqlTemplate;
    readonly pendingSn: SqlTemplate;
    readonly lagNs: bigint;
    /**
     * `join_quiesce_threshold_ms`: once the right side has had no rows for this long while left
     * rows wait, those are joined with the right side as it is (join-inputs.ts). Unset: they wait.
     */
    readonly quiesceMs?: number;
  };
  /** The right side is an append stream read from where the query started (ASOF / LATEST). */
  readonly rightFromStart?: boolean;
}

/**
 * Stream-to-stream range join (`date_diff_within`, `date_diff(...) BETWEEN`): Proton's bucketed
 * join (HashJoin.cpp insertBlockToRangeBucketsAndJoin, BufferedStreamData): each side's rows fall
 * in time buckets of `bucket` ns; each side's watermark is its largest bucket; the combined
 * watermark is the smaller of the two (once both sides have rows). A new row whose bucket ends
 * before the combined watermark is late and dropped; rows of buckets older than it are pruned.
 */
export interface RangeJoin {
  readonly kind: 'range';
  readonly left: number;
  readonly right: number;
  readonly leftJoin: boolean;
  /** Bucket size in nanoseconds. */
  readonly bucket: bigint;
  /**
   * Per side (left, right): `to_string(max bucket)` of the side's rows in a range (`\\N` when none),
   * and `to_string(min _tp_sn)` of its rows whose bucket is at least `__TRB_JMIN_L__` / `_R__`
   * (where its live rows start; undefined when the side is not a plain stream, e.g. a subquery).
   */
  readonly maxBucket: readonly [SqlTemplate, SqlTemplate];
  readonly liveSn: readonly [SqlTemplate | undefined, SqlTemplate | undefined];
  /**
   * Per side, the engine table of a side that is a nested query's output (a range join feeding
   * this one, range-join-chain.ts): its rows before the side's live rows are deleted now and then,
   * so the table stays bounded as the stored streams' pruned rows are (they are never read again).
   */
  readonly prune?: readonly [string | undefined, string | undefined];
}

/** Placeholders of a range join's per-part filters: smallest bucket (ns) read on each side. */
export const JOIN_MIN_LEFT = '__TRB_JMIN_L__';
export const JOIN_MIN_RIGHT = '__TRB_JMIN_R__';
