import type { Logger } from '../log/logger.ts';
import { FlushLock } from './flush-lock.ts';
import type { BufferPolicy } from './stream-tables.ts';

export interface BufferFlusherOptions {
  /** `db.name`, for logs. */
  key: string;
  policy: BufferPolicy;
  /** Move every row of the front into the MergeTree (stream-tables.ts, `moveFrontStatements`). */
  flush: () => Promise<void>;
  logger?: Logger;
  /** How long a due flush waits politely for a moment with no read inside (ms; default 1000). */
  patienceMs?: number;
  /** How often a stream with buffered rows checks the policy (ms; default 200). */
  checkEveryMs?: number;
}

type Due = 'no' | 'polite' | 'urgent';

/**
 * Moves one hybrid stream's front (a Buffer) into its MergeTree, under the stream's FlushLock so
 * that no read of the stream overlaps a move (while a move runs, its rows are in both tables). The
 * front is created with thresholds it never reaches; this class applies the policy instead, with
 * the engine's rule: move when the time, rows and bytes minimums are all reached, or any maximum is.
 *
 * A flush due by the minimums or by time is polite (it waits for a moment with no read inside, up
 * to `patienceMs`, before holding reads back); one due to the row or byte maximum is urgent.
 */
export class BufferFlusher {
  readonly lock = new FlushLock();
  private rows = 0;
  private bytes = 0;
  /** When the oldest unflushed row was inserted (ms). */
  private since = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private flushes = 0;

  constructor(private readonly o: BufferFlusherOptions) {}

  /** Rows inserted into the Buffer and not yet flushed (approximate while a flush runs). */
  get bufferedRows(): number {
    return this.rows;
  }

  /** A flush is running or waiting for its turn. */
  get flushing(): boolean {
    return this.running !== undefined;
  }

  /** Flushes done so far, for tests and logs. */
  get flushCount(): number {
    return this.flushes;
  }

  /** An insert into the Buffer succeeded. */
  inserted(rows: number, bytes: number, now = Date.now()): void {
    if (rows <= 0 || this.closed) return;
    if (this.rows === 0) this.since = now;
    this.rows += rows;
    this.bytes += bytes;
    this.check(now);
    if (!this.timer && this.rows > 0) {
      this.timer = setInterval(() => this.check(Date.now()), this.o.checkEveryMs ?? 200);
      this.timer.unref();
    }
  }

  /** Run `fn` (a read of the front table) while no flush runs. */
  read<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.read(fn);
  }

  /**
   * Flush now, waiting for the reads inside and holding new ones back, then run `then` (if any)
   * before reads resume (ALTER STREAM rebuilds the front table there).
   */
  async flushNow<T>(then?: () => Promise<T>): Promise<T | undefined> {
    await this.running;
    return this.lock.exclusive(async () => {
      await this.flushLocked();
      return then ? await then() : undefined;
    });
  }

  /** Stop checking and flush what is buffered (errors are the caller's). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopTimer();
    await this.running;
    await this.lock.exclusive(() => this.flushLocked());
  }

  /** Stop checking without flushing (the stream is being dropped). */
  discard(): void {
    this.closed = true;
    this.stopTimer();
  }

  private due(now: number): Due {
    const p = this.o.policy;
    if (this.rows === 0) return 'no';
    if (this.rows >= p.maxRows || this.bytes >= p.maxBytes) return 'urgent';
    const age = (now - this.since) / 1000;
    if (age >= p.maxTimeS) return 'polite';
    if (age >= p.minTimeS && this.rows >= p.minRows && this.bytes >= p.minBytes) return 'polite';
    return 'no';
  }

  private check(now: number): void {
    if (this.running || this.closed) return;
    const due = this.due(now);
    if (due === 'no') return;
    const patience = due === 'urgent' ? 0 : (this.o.patienceMs ?? 1000);
    this.running = this.lock
      .exclusive(() => this.flushLocked(), patience)
      .catch((e: unknown) => {
        this.o.logger?.warn({ err: e, stream: this.o.key }, 'Buffer flush failed; retrying');
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  private async flushLocked(): Promise<void> {
    // Rows inserted while the flush runs may or may not be flushed by it; they stay counted, so
    // at worst the next flush comes early.
    const rows = this.rows;
    const bytes = this.bytes;
    const since = this.since;
    this.rows = 0;
    this.bytes = 0;
    this.since = Date.now();
    try {
      await this.o.flush();
      this.flushes++;
    } catch (e) {
      this.rows += rows;
      this.bytes += bytes;
      this.since = since;
      throw e;
    }
    if (this.rows === 0) this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
