import { addInterval, type WindowInterval, windowStartOf } from './window-interval.ts';

/** The window a streaming aggregation groups by. */
export type WindowShape =
  | { kind: 'tumble'; size: WindowInterval }
  | { kind: 'hop'; slide: WindowInterval; size: WindowInterval }
  | { kind: 'session'; idle: WindowInterval; maxLength: WindowInterval };

export const NO_WATERMARK = Number.NEGATIVE_INFINITY;

/**
 * The end of the last window that is complete once the watermark reaches `t`: tumble and hop
 * windows close when the (delayed) max event time passes their end (Proton's
 * getLastFinalizedWindow). Session windows use the delayed time itself.
 */
export function lastFinalizedWindowEnd(t: number, shape: WindowShape): number {
  switch (shape.kind) {
    case 'tumble':
      return windowStartOf(t, shape.size);
    case 'hop': {
      const currentStart = windowStartOf(t, shape.slide);
      let end = addInterval(currentStart, shape.size);
      while (end > t) end = addInterval(end, shape.slide, -1);
      return end;
    }
    case 'session':
      return t;
  }
}

/**
 * Event-time progress of one window aggregation (streaming-sql-notes.md §1.7, Proton's
 * WatermarkStamper): rows older than the watermark in force before their batch are late; after a
 * batch the watermark moves to the last window end at or before `max event time - delay`.
 */
export class WatermarkTracker {
  private maxEventTime = NO_WATERMARK;
  private current = NO_WATERMARK;

  constructor(
    readonly shape: WindowShape,
    readonly delay: WindowInterval | undefined,
  ) {}

  /** The watermark in force: rows with an event time below it are late. */
  get watermark(): number {
    return this.current;
  }

  get maxEventTs(): number {
    return this.maxEventTime;
  }

  /** Take a batch's largest event time; answers whether the watermark advanced. */
  observe(batchMaxEventTime: number): boolean {
    if (!(batchMaxEventTime > this.maxEventTime)) return false;
    this.maxEventTime = batchMaxEventTime;
    const delayed = this.delay ? addInterval(batchMaxEventTime, this.delay, -1) : batchMaxEventTime;
    const next = lastFinalizedWindowEnd(delayed, this.shape);
    if (next > this.current) {
      this.current = next;
      return true;
    }
    return false;
  }

  /** EMIT ... TIMEOUT fired: everything seen so far is complete. */
  timeout(): boolean {
    if (this.maxEventTime === NO_WATERMARK) return false;
    const next = this.maxEventTime + 1;
    if (next <= this.current) return false;
    this.current = next;
    return true;
  }

  /** State for checkpoints. */
  save(): { maxEventTime: number; watermark: number } {
    return { maxEventTime: this.maxEventTime, watermark: this.current };
  }

  restore(s: { maxEventTime: number; watermark: number }): void {
    this.maxEventTime = s.maxEventTime;
    this.current = s.watermark;
  }
}
