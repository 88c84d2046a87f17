import type { WindowInterval } from './window-interval.ts';
import { addNanos, type Nanos, windowStartNanos } from './window-time.ts';

/** The window a streaming aggregation groups by. */
export type WindowShape =
  | { kind: 'tumble'; size: WindowInterval }
  | { kind: 'hop'; slide: WindowInterval; size: WindowInterval }
  | { kind: 'session'; idle: WindowInterval; maxLength: WindowInterval };

/**
 * The end of the last window that is complete once the watermark reaches `t`: tumble and hop
 * windows close when the (delayed) max event time passes their end (Proton's
 * getLastFinalizedWindow). Session windows use the delayed time itself.
 */
export function lastFinalizedWindowEnd(t: Nanos, shape: WindowShape): Nanos {
  switch (shape.kind) {
    case 'tumble':
      return windowStartNanos(t, shape.size);
    case 'hop': {
      const currentStart = windowStartNanos(t, shape.slide);
      let end = addNanos(currentStart, shape.size);
      while (end > t) end = addNanos(end, shape.slide, -1);
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
 * `undefined` means no watermark yet.
 */
export class WatermarkTracker {
  private maxEventTime: Nanos | undefined;
  private current: Nanos | undefined;

  constructor(
    readonly shape: WindowShape,
    readonly delay: WindowInterval | undefined,
  ) {}

  /** The watermark in force: rows with an event time below it are late. */
  get watermark(): Nanos | undefined {
    return this.current;
  }

  get maxEventTs(): Nanos | undefined {
    return this.maxEventTime;
  }

  /** Take a batch's largest event time; answers whether the watermark advanced. */
  observe(batchMaxEventTime: Nanos): boolean {
    if (this.maxEventTime !== undefined && batchMaxEventTime <= this.maxEventTime) return false;
    this.maxEventTime = batchMaxEventTime;
    const delayed = this.delay ? addNanos(batchMaxEventTime, this.delay, -1) : batchMaxEventTime;
    const next = lastFinalizedWindowEnd(delayed, this.shape);
    if (this.current === undefined || next > this.current) {
      this.current = next;
      return true;
    }
    return false;
  }

  /** The tracker's progress, for a checkpoint: `[max event time, watermark]` as decimal text. */
  save(): [string | null, string | null] {
    return [this.maxEventTime?.toString() ?? null, this.current?.toString() ?? null];
  }

  /** Take back the progress `save` answered. */
  restore([max, current]: readonly [string | null, string | null]): void {
    this.maxEventTime = max === null ? undefined : BigInt(max);
    this.current = current === null ? undefined : BigInt(current);
  }

  /** EMIT ... TIMEOUT fired: everything seen so far is complete. */
  timeout(): boolean {
    if (this.maxEventTime === undefined) return false;
    const next = this.maxEventTime + 1n;
    if (this.current !== undefined && next <= this.current) return false;
    this.current = next;
    return true;
  }
}
