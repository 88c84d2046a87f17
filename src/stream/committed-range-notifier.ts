import type { Logger } from '../log/logger.ts';

/** Sequence numbers `fromSn` .. `toSn` (both inclusive) were committed: readable, durable. */
export interface CommittedRange {
  readonly fromSn: number;
  readonly toSn: number;
}

export type RangeListener = (range: CommittedRange) => void;

/**
 * In-process publication of committed ranges, per stream key (`db.name`). Ranges of a stream are
 * published in order, each once, after the rows are in the WAL and readable from the engine. A
 * listener's exception is logged and does not affect other listeners or the writer.
 */
export class CommittedRangeNotifier {
  private readonly listeners = new Map<string, Set<RangeListener>>();

  constructor(private readonly logger?: Logger) {}

  /** Start receiving ranges of `key`; answers the function that stops it. */
  subscribe(key: string, listener: RangeListener): () => void {
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      const s = this.listeners.get(key);
      s?.delete(listener);
      if (s?.size === 0) this.listeners.delete(key);
    };
  }

  publish(key: string, range: CommittedRange): void {
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

  /** Forget every listener of `key` (the stream was dropped). */
  clear(key: string): void {
    this.listeners.delete(key);
  }
}
