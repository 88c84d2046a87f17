/**
 * Join alignment of a join of two changelog inputs (`lag_behind(offset, ...)` in its ON; Proton's
 * ChangelogJoinTransformWithAlignment, whose watermark rule this follows): each side has a
 * watermark, the largest time among the rows it has received. The rows received are pulled one at
 * a time from each side in turn (the right side first), and after each pull the rows waiting on
 * each side apply when the other side allows:
 * - the right side's waiting rows apply once `right watermark <= left watermark - offset`;
 * - the left side's once `left watermark - offset < right watermark`.
 * A side's rows apply together, in sequence order, each change meeting the other side as it
 * stands then (its rows applied so far). Rows that cannot apply wait for later rows of the other
 * side (across steps). Nothing is released by time alone (`join_quiesce_threshold_ms` is not
 * applied here).
 */

/** One side's rows to apply: its sequence range `(from, to]`. */
export interface AlignedChange {
  readonly side: 0 | 1;
  readonly from: number;
  readonly to: number;
}

/** A side's row: sequence number and time in nanoseconds. */
export interface TimedRow {
  readonly sn: number;
  readonly t: bigint;
}

interface SavedAlignment {
  readonly done: readonly [number, number];
  readonly wm: readonly [string | null, string | null];
}

export class ChangelogAlignment {
  /** Per side: rows up to this sequence number have applied. */
  readonly done: [number, number];
  /** Per side: rows up to this sequence number were pulled (applied or waiting). */
  readonly seen: [number, number];
  private readonly wm: [bigint | undefined, bigint | undefined] = [undefined, undefined];

  constructor(
    private readonly lagNs: bigint,
    start: readonly [number, number],
  ) {
    this.done = [start[0], start[1]];
    this.seen = [start[0], start[1]];
  }

  /**
   * Pull the rows received since the last step (each side's in sequence order, after `seen`) and
   * answer the changes that apply, in order.
   */
  pull(rows: readonly [readonly TimedRow[], readonly TimedRow[]]): AlignedChange[] {
    const changes: AlignedChange[] = [];
    const next = [0, 0];
    const apply = (side: 0 | 1) => {
      if (this.seen[side] <= this.done[side]) return false;
      changes.push({ side, from: this.done[side], to: this.seen[side] });
      this.done[side] = this.seen[side];
      return true;
    };
    const pullOne = (side: 0 | 1) => {
      const row = rows[side][next[side] as number];
      if (!row) return;
      next[side] = (next[side] as number) + 1;
      this.seen[side] = row.sn;
      const w = this.wm[side];
      if (w === undefined || row.t > w) this.wm[side] = row.t;
    };
    while ((next[0] as number) < rows[0].length || (next[1] as number) < rows[1].length) {
      pullOne(1);
      pullOne(0);
      // Apply what the watermarks allow, until nothing more does.
      for (let moved = true; moved; ) {
        moved = false;
        if (this.rightMayApply()) moved = apply(1) || moved;
        if (this.leftMayApply()) moved = apply(0) || moved;
      }
    }
    return changes;
  }

  private rightMayApply(): boolean {
    const [l, r] = this.wm;
    return r !== undefined && l !== undefined && r <= l - this.lagNs;
  }

  private leftMayApply(): boolean {
    const [l, r] = this.wm;
    return l !== undefined && r !== undefined && l - this.lagNs < r;
  }

  save(): SavedAlignment {
    return {
      done: [this.done[0], this.done[1]],
      wm: [this.wm[0]?.toString() ?? null, this.wm[1]?.toString() ?? null],
    };
  }

  /** Take back a checkpoint: the waiting rows are pulled again from where each side applied. */
  restore(saved: unknown): void {
    const s = saved as SavedAlignment | undefined;
    if (!s) return;
    for (const i of [0, 1] as const) {
      this.done[i] = s.done[i];
      this.seen[i] = s.done[i];
      const w = s.wm[i];
      this.wm[i] = w === null ? undefined : BigInt(w);
    }
  }
}
