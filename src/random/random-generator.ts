import type { Engine } from '../engine/engine.ts';
import type { Logger } from '../log/logger.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import { randomBatchSql } from './random-batch-sql.ts';
import type { RandomSettings } from './random-settings.ts';

/** Rows per batch when `eps` is 0 ("as fast as possible"). */
const UNLIMITED_BATCH = 10_000;

export interface GeneratorDeps {
  readonly engine: Engine;
  /** Commit NDJSON rows into the random stream's storage (StreamStore.ingestBody, format streaming). */
  readonly commit: (db: string, name: string, ndjson: Buffer) => Promise<unknown>;
  readonly logger?: Logger;
}

/**
 * Generates a random stream's rows while at least one streaming query reads it: every
 * `interval_time` ms it commits the rows due by then (`eps` × time since start, so the rate holds on
 * average whatever the timer's jitter) through the normal ingest path, so streaming queries read
 * them as committed ranges like any stream's. The first batch (one interval's worth) is generated
 * at once. With no reader it stops: no data is generated or kept while nobody queries.
 */
export class RandomGenerator {
  private readers = 0;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private generated = 0;
  private busy = false;
  /** Rows generated since this generator was built (for tests and stats). */
  total = 0;

  constructor(
    private readonly deps: GeneratorDeps,
    private definition: StreamDefinition,
    private settings: RandomSettings,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** A reader arrives; the first one starts generation. */
  acquire(): void {
    this.readers += 1;
    if (this.readers === 1) this.start();
  }

  /** A reader leaves; the last one stops generation. */
  release(): void {
    if (this.readers === 0) return;
    this.readers -= 1;
    if (this.readers === 0) this.stop();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    this.startedAt = Date.now();
    this.generated = 0;
    this.timer = setInterval(() => void this.tick(), this.settings.intervalTimeMs);
    this.timer.unref?.();
    // The first batch is due at the start instant itself: exactly one interval's worth, even when
    // the clock ticks between setting startedAt and this call.
    void this.tick(this.startedAt);
  }

  /** Rows due now: one interval ahead of the time elapsed, so a batch is ready as the interval starts. */
  private due(now: number): number {
    const { eps, intervalTimeMs } = this.settings;
    if (eps === 0) return UNLIMITED_BATCH;
    const target = Math.floor((eps * (now - this.startedAt + intervalTimeMs)) / 1000);
    let due = target - this.generated;
    // After a stall (a slow engine, a paused process) skip what was missed rather than burst.
    const cap = Math.max(1, Math.ceil((eps * intervalTimeMs) / 1000) * 10);
    if (due > cap) {
      this.generated = target - cap;
      due = cap;
    }
    return due;
  }

  private async tick(now = Date.now()): Promise<void> {
    if (this.busy || !this.timer) return;
    const count = this.due(now);
    if (count <= 0) return;
    this.busy = true;
    const { db, name } = this.definition;
    try {
      const sql = randomBatchSql(this.definition, count, { withTime: false, rowOffset: this.total });
      const result = await this.deps.engine.query(sql, {
        format: 'JSONEachRow',
        settings: { output_format_json_validate_utf8: 1 },
      });
      await this.deps.commit(db, name, Buffer.from(result.text()));
      this.generated += count;
      this.total += count;
    } catch (e) {
      this.deps.logger?.warn({ err: e, stream: `${db}.${name}` }, 'random stream: generation failed');
    } finally {
      this.busy = false;
    }
  }
}
