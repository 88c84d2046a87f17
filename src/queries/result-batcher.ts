import type { BatchingPolicy } from './query-types.ts';

/**
 * Groups rows into batches by the batching policy: a batch is flushed when it holds `count` rows,
 * or `time_ms` after its first row arrived, whichever comes first.
 */
export class ResultBatcher {
  private pending: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly policy: BatchingPolicy,
    private readonly flushBatch: (rows: string[]) => void,
  ) {}

  add(rows: readonly string[]): void {
    for (const row of rows) {
      this.pending.push(row);
      if (this.pending.length >= this.policy.count) this.flush();
    }
    if (this.pending.length > 0 && !this.timer) {
      this.timer = setTimeout(() => this.flush(), this.policy.time_ms);
    }
  }

  /** Send whatever is pending now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.flushBatch(batch);
  }

  close(): void {
    this.flush();
  }
}
