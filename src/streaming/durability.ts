import type { OutputTag } from './result-sink.ts';

/**
 * Durable streaming executions (materialized views, SUBSCRIBE): what the executor needs to resume
 * after a restart or a crash exactly where it was, emitting each result once.
 *
 * Model: the execution is a sequence of events (a step over given source ranges, a periodic emit,
 * a timeout). Before running an event it appends the event to a journal; every hand-over of rows
 * the event makes is tagged `{seq, part}` (result-sink.ts). Every so often it saves a checkpoint:
 * its cursors, its in-memory state (JSON) and copies of its state tables, as of the end of event
 * `seq`; the journal before it is then dropped. On start it restores the newest checkpoint and
 * replays the journal's later events exactly (same ranges, same kinds), tagging their outputs with
 * the same tags, then goes on live. A consumer that remembers the last tag it durably took (a
 * materialized view's target stream does) drops replayed outputs it already has: exactly once.
 */
export interface Durability {
  readonly store: CheckpointStore;
  /** Save a checkpoint at least this often while events run (ms). */
  readonly checkpointIntervalMs: number;
  /** Called after each checkpoint is saved (stats, lag). */
  onCheckpoint?(checkpoint: CheckpointInfo): void;
}

/** What a saved checkpoint says about progress (for stats and `lagging_status`). */
export interface CheckpointInfo {
  /** The last journal entry the checkpoint includes. */
  readonly seq: number;
  /** Per source stream key (`db.name`): the last `_tp_sn` the checkpoint has processed. */
  readonly processedSn: Readonly<Record<string, number>>;
  /** Largest event time processed so far, epoch ms (0 when unknown). */
  readonly processedTime: number;
  /** When it was saved, epoch ms. */
  readonly savedAt: number;
}

/** One event of a durable execution, as journaled before it runs. */
export type JournalEntry =
  | {
      readonly seq: number;
      readonly kind: 'step';
      /** Per source index: the range `(lo, hi]` of `_tp_sn` the step read. */
      readonly ranges: ReadonlyArray<readonly [number, number]>;
      /** The step ran as part of a backfill (watermarks muted, no emits). */
      readonly backfill?: boolean;
      /**
       * Where inserts ended inside the range of source 0 (ascending, each below its `hi`): a window
       * aggregation judges lateness insert by insert inside one step (streaming-execution.ts).
       */
      readonly cuts?: readonly number[];
      /** A step with no new rows releasing an aligned join's waiting left rows (join-inputs.ts). */
      readonly quiesce?: boolean;
    }
  | { readonly seq: number; readonly kind: 'periodic' | 'timeout' | 'backfill-end' };

/** A saved checkpoint: everything needed to rebuild the execution as of the end of event `seq`. */
export interface ExecutionCheckpoint extends CheckpointInfo {
  /** The execution's in-memory state (cursors, watermarks, emit versions, ...), as it serializes it. */
  readonly state: unknown;
  /**
   * Engine tables saved with the checkpoint, by a name stable across runs (`state`, `dedup0`, ...):
   * given to `save`, the execution's live table to copy; as `load` answers it, the saved copy.
   */
  readonly tables: Readonly<Record<string, string>>;
}

/**
 * Where one durable execution keeps its checkpoints and journal. Implementations make `save` atomic
 * (a crash in the middle leaves the previous checkpoint in force) and `append` durable before it
 * resolves (an event's outputs may be written right after).
 */
export interface CheckpointStore {
  /** The newest saved checkpoint, or undefined before the first. */
  load(): Promise<ExecutionCheckpoint | undefined>;
  save(checkpoint: ExecutionCheckpoint): Promise<void>;
  /** Journal an event before it runs. */
  append(entry: JournalEntry): Promise<void>;
  /** Journal entries after the newest checkpoint, in order. */
  journal(): Promise<JournalEntry[]>;
  /** Release what the store holds open (the run ended); it can be used again afterwards. */
  close?(): Promise<void>;
  /** Remove everything (the view or subscription is dropped), its nested stores' too. */
  destroy(): Promise<void>;
  /**
   * The store of the execution's nested query `index` (a subquery or view over a stream, run
   * alongside it, durability.ts's model applied to each), kept and destroyed with this one.
   * Without it, a query with nested queries cannot run durably.
   */
  nested?(index: number): CheckpointStore;
}

export type { OutputTag };
