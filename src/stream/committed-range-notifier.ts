import type { Logger } from '../log/logger.ts';

/** Sequence numbers `fromSn` .. `toSn` (both inclusive) were committed: readable, durable. */
export interface CommittedRange {
  readonly fromSn: number;
  readonly toSn: number;
}

export type RangeListener = (range: CommittedRange) => void;

/** Commit ends kept per stream at least (recentCommitEnds). */
const KEPT_COMMIT_ENDS = 4096;

/**
 * In-process publication of committed ranges, per stream key (`db.name`). Ranges of a stream are
 * published in order, each once, after the rows are in the WAL and readable from the engine. A
 * listener's exception is logged and does not affect other listeners or the writer.
 */
export class CommittedRangeNotifier {
  private readonly listeners = new Map<string, Set<RangeListener>>();
  /** Per stream key: the last `_tp_sn` of its recent commits, ascending (KEPT_COMMIT_ENDS to twice that). */
  private readonly commitEnds = new Map<string, number[]>();

  constructor(private readonly logger?: Logger) {}

  /** Start receiving ranges of `key`; answers the function that stops it. */
  subscribe(key: string, listener: RangeListener): () => void {
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    // A wrapper of its own, so the same function subscribed twice is unsubscribed once.
    const entry: RangeListener = (range) => listener(range);
    set.add(entry);
    return () => {
      // The stream may have been renamed since: look for the entry under every key.
      for (const [k, s] of this.listeners) {
        if (!s.delete(entry)) continue;
        if (s.size === 0) this.listeners.delete(k);
        return;
      }
    };
  }

  publish(key: string, range: CommittedRange): void {
    let ends = this.commitEnds.get(key);
    if (!ends) {
      ends = [];
      this.commitEnds.set(key, ends);
    }
    ends.push(range.toSn);
    // Trimmed in chunks: amortised O(1) per commit on the write path.
    if (ends.length > 2 * KEPT_COMMIT_ENDS) ends.splice(0, ends.length - KEPT_COMMIT_ENDS);
    const set = this.listeners.get(key);
    if (!set) return;
    for (const l of [...set]) {
      try {
        l(range);
      } catch (e) {
        this.logger?.error({ err: e, stream: key }, 'committed-range listener failed');
      }
    }
  }

  /**
   * Where the recent commits of `key` after `afterSn` ended (ascending; those this process saw,
   * at most the last few thousand): a streaming query catching up over them can take them insert
   * by insert.
   */
  recentCommitEnds(key: string, afterSn: number): number[] {
    return (this.commitEnds.get(key) ?? []).filter((sn) => sn > afterSn);
  }

  /**
   * The stream was renamed: its listeners hear the new name's ranges. (A streaming query planned
   * over the old name then fails on its next read, with the engine's unknown-table error.)
   */
  rename(from: string, to: string): void {
    const ends = this.commitEnds.get(from);
    this.commitEnds.delete(from);
    if (ends) this.commitEnds.set(to, ends);
    const set = this.listeners.get(from);
    if (!set) return;
    this.listeners.delete(from);
    const target = this.listeners.get(to);
    if (target) for (const l of set) target.add(l);
    else this.listeners.set(to, set);
  }

  /** Forget every listener of `key` (the stream was dropped). */
  clear(key: string): void {
    this.listeners.delete(key);
    this.commitEnds.delete(key);
  }
}
