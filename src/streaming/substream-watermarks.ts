import { quoteString } from '../engine/settings-clause.ts';
import { WatermarkTracker, type WindowShape } from './watermark.ts';
import type { WindowInterval } from './window-interval.ts';
import { MIN_NANOS, type Nanos } from './window-time.ts';

/**
 * One watermark per substream (PARTITION BY key; a single '' key without one): each substream's
 * windows close on its own event time, as Proton runs an independent aggregation per substream.
 */
export class SubstreamWatermarks {
  private readonly trackers = new Map<string, WatermarkTracker>();

  constructor(
    private readonly shape: WindowShape,
    private readonly delay: WindowInterval | undefined,
  ) {}

  /** Take a batch's largest event time per substream; answers whether any watermark advanced. */
  observe(maxima: ReadonlyMap<string, Nanos>): boolean {
    let advanced = false;
    for (const [key, max] of maxima) {
      let t = this.trackers.get(key);
      if (!t) {
        t = new WatermarkTracker(this.shape, this.delay);
        this.trackers.set(key, t);
      }
      if (t.observe(max)) advanced = true;
    }
    return advanced;
  }

  /** An independent copy of every substream's progress. */
  copy(): SubstreamWatermarks {
    const c = new SubstreamWatermarks(this.shape, this.delay);
    c.restore(this.save());
    return c;
  }

  /** Every substream's progress, for a checkpoint. */
  save(): Array<[string, string | null, string | null]> {
    return [...this.trackers].map(([key, t]) => [key, ...t.save()]);
  }

  /** Take back what `save` answered (replacing any progress so far). */
  restore(saved: ReadonlyArray<readonly [string, string | null, string | null]>): void {
    this.trackers.clear();
    for (const [key, max, current] of saved) {
      const t = new WatermarkTracker(this.shape, this.delay);
      t.restore([max, current]);
      this.trackers.set(key, t);
    }
  }

  /** EMIT ... TIMEOUT: every substream's rows so far are final. */
  timeout(): boolean {
    let any = false;
    for (const t of this.trackers.values()) if (t.timeout()) any = true;
    return any;
  }

  get any(): boolean {
    return [...this.trackers.values()].some((t) => t.watermark !== undefined);
  }

  /** Largest event time seen in any substream. */
  maxEventTime(): Nanos | undefined {
    let max: Nanos | undefined;
    for (const t of this.trackers.values()) {
      const m = t.maxEventTs;
      if (m !== undefined && (max === undefined || m > max)) max = m;
    }
    return max;
  }

  /** SQL for the watermark a state row's window closes at: its own substream's (`stateKeySql`). */
  closingSql(stateKeySql: string): string {
    return this.lookupSql(stateKeySql);
  }

  /**
   * SQL for the watermark (Int64 nanoseconds) of the substream whose key `keySql` computes; the
   * smallest Int64 for substreams without one.
   */
  lookupSql(keySql: string): string {
    const entries = [...this.trackers].filter(([, t]) => t.watermark !== undefined);
    if (entries.length === 0) return `toInt64(${MIN_NANOS})`;
    const keys = entries.map(([k]) => quoteString(k)).join(', ');
    const values = entries.map(([, t]) => String(t.watermark)).join(', ');
    return `transform(${keySql}, [${keys}], [${values}], toInt64(${MIN_NANOS}))`;
  }
}
