import { SubstreamWatermarks } from './substream-watermarks.ts';
import type { WindowShape } from './watermark.ts';
import type { WindowInterval } from './window-interval.ts';
import { MIN_NANOS, type Nanos } from './window-time.ts';

/**
 * The watermarks of a window aggregation over a stream with several shards (`SETTINGS shards=N`).
 * Proton reads each shard with its own source and watermark: a row is late against its own
 * shard's watermark, and the aggregation finalizes windows at the smallest watermark of all the
 * stream's shards (ManyAggregatedData keeps one watermark per shard input, each starting invalid),
 * so a window stays open until every shard's watermark has passed its end, and a shard that never
 * got a row holds every window open.
 *
 * Keys are shard numbers as text ('0' .. 'N-1'), as the step's range read computes them from
 * `_tp_shard`; one tracker per shard, saved in checkpoints like substreams' trackers.
 */
export class ShardWatermarks {
  private readonly perShard: SubstreamWatermarks;

  constructor(
    private readonly shape: WindowShape,
    private readonly delay: WindowInterval | undefined,
    readonly shards: number,
  ) {
    this.perShard = new SubstreamWatermarks(shape, delay);
  }

  /**
   * The watermark windows close at: the smallest of the shards' watermarks, undefined while any
   * shard has none.
   */
  get aligned(): Nanos | undefined {
    const byShard = new Map(this.perShard.save().map(([key, , current]) => [key, current]));
    let min: Nanos | undefined;
    for (let shard = 0; shard < this.shards; shard++) {
      const current = byShard.get(String(shard));
      if (current === undefined || current === null) return undefined;
      const w = BigInt(current);
      if (min === undefined || w < min) min = w;
    }
    return min;
  }

  /** Take a batch's largest event time per shard; answers whether the aligned watermark advanced. */
  observe(maxima: ReadonlyMap<string, Nanos>): boolean {
    const before = this.aligned;
    this.perShard.observe(maxima);
    return advancedFrom(before, this.aligned);
  }

  copy(): ShardWatermarks {
    const c = new ShardWatermarks(this.shape, this.delay, this.shards);
    c.restore(this.save());
    return c;
  }

  /** Every shard's progress, for a checkpoint. */
  save(): Array<[string, string | null, string | null]> {
    return this.perShard.save();
  }

  restore(saved: ReadonlyArray<readonly [string, string | null, string | null]>): void {
    this.perShard.restore(saved);
  }

  /** EMIT ... TIMEOUT: every shard's rows so far are final (shards without rows still hold). */
  timeout(): boolean {
    const before = this.aligned;
    this.perShard.timeout();
    return advancedFrom(before, this.aligned);
  }

  /** Whether windows can close: every shard has a watermark. */
  get any(): boolean {
    return this.aligned !== undefined;
  }

  maxEventTime(): Nanos | undefined {
    return this.perShard.maxEventTime();
  }

  /** SQL for a row's late bound: the watermark of its shard (`keySql` computes the shard key). */
  lookupSql(keySql: string): string {
    return this.perShard.lookupSql(keySql);
  }

  /** SQL for the watermark windows close at (the same for every state row). */
  closingSql(_stateKeySql: string): string {
    return `toInt64(${this.aligned ?? MIN_NANOS})`;
  }
}

function advancedFrom(before: Nanos | undefined, after: Nanos | undefined): boolean {
  return after !== undefined && (before === undefined || after > before);
}
