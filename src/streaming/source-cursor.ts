import type { SharedStepReads } from './shared-step-reads.ts';
import type { BoundSource } from './stream-bindings.ts';

/** What the executor needs of the stream layer: committed positions and their notifications. */
export interface CommittedRanges {
  /** The last committed `_tp_sn` of the stream `db.name` (-1 when empty). */
  committedSn(key: string): number;
  /** Call `listener` with the new last committed sn after every commit; answers the unsubscribe. */
  subscribe(key: string, listener: (toSn: number) => void): () => void;
  /**
   * Run `work`, engine reads of the streams `keys`, while none of their Buffers is being flushed
   * (a read overlapping a flush can miss rows; src/stream/flush-lock.ts). Unknown keys are ignored.
   */
  read<T>(keys: readonly string[], work: () => Promise<T>): Promise<T>;
  /**
   * A step's SQL with its marked range reads pointed at the streams' fronts where the range lies
   * there (src/stream/front-range-reads.ts); call it only inside `read` of those streams.
   */
  resolveReads(sql: string): string;
  /**
   * Where the stream's recent commits after `afterSn` ended, ascending, as far as known (a
   * cursor opening behind the committed position takes them insert by insert).
   */
  recentCommitEnds?(key: string, afterSn: number): number[];
  /** Steps of several executions over the same range share one read (shared-step-reads.ts). */
  readonly shared?: SharedStepReads;
}

/**
 * The read position of one source of a streaming query: rows with `_tp_sn` in
 * `(after, committed]` are waiting to be processed.
 */
export class SourceCursor {
  private unsubscribe: (() => void) | undefined;
  committed: number;
  /**
   * The last `_tp_sn` of each commit still ahead of `after`, ascending: where one insert ends and
   * the next begins (commits before the cursor opened as far as the stream layer remembers them;
   * a range it does not know is one piece).
   */
  private readonly commitEnds: number[] = [];

  constructor(
    readonly source: BoundSource,
    /** Rows with `_tp_sn <= after` are not this query's (already processed, or before its start). */
    public after: number,
    ranges: CommittedRanges,
    onCommit: () => void,
  ) {
    this.committed = ranges.committedSn(source.key);
    // All that is known: a restore may move `after` back (nextRange skips ends behind it).
    for (const end of ranges.recentCommitEnds?.(source.key, -1) ?? [])
      if (end <= this.committed) this.commitEnds.push(end);
    this.unsubscribe = ranges.subscribe(source.key, (toSn) => {
      if (toSn > this.committed) {
        this.committed = toSn;
        this.commitEnds.push(toSn);
      }
      onCommit();
    });
  }

  get pending(): number {
    return Math.max(0, this.committed - this.after);
  }

  /** How many commits the pending rows came in (as far as known; at least 1 when rows are pending). */
  get pendingCommits(): number {
    if (this.pending === 0) return 0;
    let n = 0;
    for (const end of this.commitEnds) if (end > this.after) n++;
    return Math.max(n, 1);
  }

  /**
   * The next range to process, at most `maxRows` rows long: `(after, hi]`. With `oneCommit` it
   * ends where the first commit ahead ends, so a step sees one insert as Proton's pipeline sees
   * one block (a window aggregation judges lateness insert by insert).
   */
  nextRange(maxRows: number, oneCommit = false): { lo: number; hi: number } {
    let hi = Math.min(this.committed, this.after + maxRows);
    // Ends at or behind `after` are done with (pruned at every step, so the list stays short).
    const ahead = this.commitEnds.findIndex((end) => end > this.after);
    this.commitEnds.splice(0, ahead === -1 ? this.commitEnds.length : ahead);
    const end = this.commitEnds[0];
    if (oneCommit && end !== undefined && end < hi) hi = end;
    return { lo: this.after, hi };
  }

  /** Where commits ended strictly inside `(lo, hi)`, ascending (call after `nextRange`). */
  commitEndsWithin(lo: number, hi: number): number[] {
    return this.commitEnds.filter((end) => end > lo && end < hi);
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
