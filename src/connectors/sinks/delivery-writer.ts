import { randomUUID } from 'node:crypto';
import { parse, stringify } from 'lossless-json';
import type { Logger } from '../../log/logger.ts';
import type { ResultColumn } from '../../queries/query-types.ts';
import type { OutputTag, ResultSink } from '../../streaming/result-sink.ts';
import type { PauseGate } from '../../views/pause-gate.ts';
import { DeliveredMark, type DeliveryPosition, positionAfter } from './delivered-mark.ts';
import { DEFAULT_BACKOFF, type Delivery, type RetryBackoff, retryWait } from './delivery.ts';
import { DeliveryAttemptError, sendRequest } from './http-request.ts';

/** What a delivery writer reports (SourceStats has this shape: sinks reuse it). */
export interface DeliveryStats {
  recordSuccess(rows: number, bytes: number): void;
  recordFailure(rows: number, message: string): void;
}

export interface DeliveryWriterOptions {
  /** Prefix of the idempotency keys: the sink's or the view's id. */
  owner: string;
  delivery: Delivery;
  stats?: DeliveryStats;
  /** The last acknowledged batch, kept durably (durable executions). */
  mark?: DeliveredMark;
  /** Holds deliveries while the owner is paused. */
  gate?: PauseGate;
  backoff?: RetryBackoff;
  /** Give up after this many attempts of one batch (INSERT INTO); default: retry until stopped. */
  maxAttempts?: number;
  /** Send only these result columns (an external stream's columns); default: all but `_tp_sn`. */
  columns?: readonly string[];
  logger?: Logger;
}

/**
 * The sink of a streaming execution whose results go to an HTTP receiver (an http or slack sink,
 * a materialized view INTO an http external stream, an INSERT INTO one). Each hand-over is sent in
 * batches of at most `batchSize` rows; a batch is retried with backoff (the receiver's Retry-After
 * first) until the receiver answers 2xx, so no row is lost, and the hand-over resolves only then,
 * which holds the execution back (backpressure, and a checkpoint never passes undelivered rows).
 *
 * Exactly once to a receiver that drops repeated keys: a batch carries the idempotency key
 * `<owner>-<seq>-<part>-<batch>` from the durable execution's output tag, the same when the
 * execution replays it after a restart or a crash. The last acknowledged position is saved durably
 * after each 2xx (DeliveredMark); a replayed batch at or before it is not sent again. Only a batch
 * acknowledged by the receiver but not yet marked (a crash in between) is sent twice, with the same key.
 */
export class DeliveryWriter implements ResultSink {
  readonly counters = { rows: 0, writes: 0, lastWriteAt: 0 };
  private header: readonly ResultColumn[] = [];
  private readonly stop = new AbortController();
  private readonly runId = randomUUID().slice(0, 8);
  private untagged = 0;
  private lastSentAt = 0;
  /** The first error of the current failing streak (cleared by a success). */
  lastError: { message: string; at: number } | undefined;

  constructor(private readonly o: DeliveryWriterOptions) {}

  /** The result header of the execution about to run (column names of the payload). */
  setHeader(header: readonly ResultColumn[]): void {
    this.header = header;
  }

  /** Stop retrying: a delivery in flight or waiting fails at once (its owner is stopping). */
  close(): void {
    this.stop.abort(new Error('the delivery is stopping'));
  }

  get closed(): boolean {
    return this.stop.signal.aborted;
  }

  async rows(rows: readonly string[], tag?: OutputTag): Promise<void> {
    if (rows.length === 0) return;
    await this.o.gate?.enter();
    try {
      const wanted = this.o.columns ? new Set(this.o.columns) : undefined;
      const keep = this.header.flatMap((c, i) =>
        (wanted ? wanted.has(c.name) : c.name !== '_tp_sn') ? [i] : [],
      );
      const columns = keep.map((i) => (this.header[i] as ResultColumn).name);
      const data = keep.length === this.header.length ? rows : rows.map((r) => pick(r, keep));
      const size = Math.max(1, this.o.delivery.batchSize);
      const mark = tag ? await this.o.mark?.load() : undefined;
      const n = this.untagged++;
      for (let b = 0, i = 0; i < data.length; b++, i += size) {
        const position: DeliveryPosition | undefined = tag
          ? { seq: tag.seq, part: tag.part, batch: b }
          : undefined;
        if (position && !positionAfter(position, mark)) continue;
        const key = position
          ? `${this.o.owner}-${position.seq}-${position.part}-${b}`
          : `${this.o.owner}-${this.runId}-${n}-${b}`;
        const batch = data.slice(i, i + size);
        await this.deliver(columns, batch, key);
        if (position) await this.o.mark?.save(position);
      }
    } finally {
      this.o.gate?.leave();
    }
  }

  /** Send one batch until the receiver takes it (or the writer stops, or attempts run out). */
  private async deliver(columns: readonly string[], rows: readonly string[], key: string): Promise<void> {
    const request = this.o.delivery.request(columns, rows, key);
    const backoff = this.o.backoff ?? DEFAULT_BACKOFF;
    for (let failures = 0; ; ) {
      await this.pace();
      this.throwIfStopped();
      try {
        this.lastSentAt = Date.now();
        await sendRequest(request);
        this.o.stats?.recordSuccess(rows.length, Buffer.byteLength(request.body));
        this.counters.rows += rows.length;
        this.counters.writes++;
        this.counters.lastWriteAt = Date.now();
        this.lastError = undefined;
        return;
      } catch (e) {
        failures++;
        const message = e instanceof Error ? e.message : String(e);
        this.o.stats?.recordFailure(rows.length, message);
        this.lastError = { message, at: Date.now() };
        if (this.o.maxAttempts !== undefined && failures >= this.o.maxAttempts) throw e;
        this.throwIfStopped();
        const wait = retryWait(
          failures,
          backoff,
          e instanceof DeliveryAttemptError ? e.retryAfterMs : undefined,
        );
        this.o.logger?.warn(
          { delivery: this.o.delivery.describe, key, retryInMs: wait, err: message },
          'delivery failed; it will be retried',
        );
        await this.sleep(wait);
      }
    }
  }

  /** Keep `minIntervalMs` between requests. */
  private async pace(): Promise<void> {
    const wait = this.lastSentAt + this.o.delivery.minIntervalMs - Date.now();
    if (wait > 0) await this.sleep(wait);
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.stop.signal;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }

  private throwIfStopped(): void {
    if (this.stop.signal.aborted) throw this.stop.signal.reason ?? new Error('the delivery is stopping');
  }
}

/** Row text with only the values at `keep` (e.g. without a query's `_tp_sn`). */
function pick(row: string, keep: readonly number[]): string {
  if (!/\d{16}/.test(row)) {
    const plain = JSON.parse(row) as unknown[];
    return JSON.stringify(keep.map((i) => plain[i]));
  }
  const values = parse(row) as unknown[];
  return stringify(keep.map((i) => values[i])) ?? row;
}

export { DeliveredMark };
