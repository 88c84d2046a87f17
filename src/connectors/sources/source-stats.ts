/** One error a source met, with when. */
export interface SourceError {
  readonly time: string;
  readonly message: string;
}

/** SourceStats as the contract has it (the `Stats` schema). */
export interface SourceStatsBody {
  success_count: number;
  failure_count: number;
  uptime: number;
  throughput: { time: string; value: number }[];
  errors: SourceError[];
}

const MINUTE = 60_000;
const KEEP_MINUTES = 24 * 60;
const KEEP_ERRORS = 100;

/**
 * A source's counters: events written (success) and failed, bytes per minute for the throughput
 * series, the last errors, and since when it runs.
 */
export class SourceStats {
  success = 0;
  failure = 0;
  startedAt: number | undefined;
  private readonly minutes = new Map<number, number>();
  private readonly errorLog: SourceError[] = [];

  recordSuccess(events: number, bytes: number, now = Date.now()): void {
    this.success += events;
    const minute = Math.floor(now / MINUTE) * MINUTE;
    this.minutes.set(minute, (this.minutes.get(minute) ?? 0) + bytes);
    for (const m of this.minutes.keys()) if (m < minute - KEEP_MINUTES * MINUTE) this.minutes.delete(m);
  }

  recordFailure(events: number, message: string, now = Date.now()): void {
    this.failure += events;
    this.errorLog.push({ time: new Date(now).toISOString(), message });
    if (this.errorLog.length > KEEP_ERRORS) this.errorLog.shift();
  }

  get lastError(): SourceError | undefined {
    return this.errorLog.at(-1);
  }

  /** The stats within the two windows (milliseconds back from now). */
  snapshot(metricsRangeMs: number, errorRangeMs: number, now = Date.now()): SourceStatsBody {
    const throughput = [...this.minutes.entries()]
      .filter(([m]) => m >= now - metricsRangeMs)
      .sort((a, b) => a[0] - b[0])
      .map(([m, bytes]) => ({ time: new Date(m).toISOString(), value: bytes / 60 }));
    const errors = this.errorLog.filter((e) => Date.parse(e.time) >= now - errorRangeMs);
    return {
      success_count: this.success,
      failure_count: this.failure,
      uptime: this.startedAt === undefined ? 0 : now - this.startedAt,
      throughput,
      errors,
    };
  }
}
