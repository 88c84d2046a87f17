import type { SourceWriter } from './source-runtime.ts';

/** Commit the rows received at least this often (ms)... */
export const BATCH_FLUSH_MS = 100;
/** ...or once this many are waiting. */
export const BATCH_FLUSH_ROWS = 5000;

/**
 * The rows of a message-per-row source (nats, websocket) between commits: `add` collects, `flush`
 * hands what is waiting to the writer, one commit at a time in order. A failed commit is counted by
 * the writer (these sources are at most once), so a flush never throws.
 */
export class RowBatcher {
  private rows: Array<Record<string, unknown>> = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly writer: SourceWriter) {}

  /** Collect a row; answers whether enough are waiting to flush now. */
  add(row: Record<string, unknown>): boolean {
    this.rows.push(row);
    return this.rows.length >= BATCH_FLUSH_ROWS;
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.rows.length === 0) return;
      const rows = this.rows;
      this.rows = [];
      await this.writer.write(rows).catch(() => undefined);
    });
    return this.flushing;
  }
}
