import type { ResultColumn } from '../queries/query-types.ts';
import type { ResultSink } from '../streaming/result-sink.ts';
import type { PauseGate } from './pause-gate.ts';
import type { WriteCounters } from './target-writer.ts';

/** Where a materialized view's rows go: its target stream's writer, or an external target's. */
export interface ViewWriter extends ResultSink {
  readonly counters: WriteCounters;
  /** The result header of the execution about to run. */
  setHeader(header: readonly ResultColumn[]): void;
  /**
   * The view stops (server stop, pause of the runner): stop at once what the writer waits on (a
   * retry backoff, an idle timer); nothing is lost.
   */
  close?(): void | Promise<void>;
  /** The view is dropped: what the writer still buffers is written out, then its buffer goes. */
  discard?(): Promise<void>;
}

/**
 * A materialized view's INTO target that is not a stream (an http external stream, an s3 external
 * table): its columns and the writer of one view into it.
 */
export interface ExternalTarget {
  readonly columns: readonly { name: string; type: string }[];
  /**
   * Refuse a view whose result columns do not fit (throws). Without it, every result column but
   * `_tp_*` must be one of `columns`.
   */
  checkInto?(header: readonly ResultColumn[]): void;
  writer(o: { producerId: string; gate: PauseGate }): ViewWriter;
}

/** External targets by name (src/external implements them; views do not import it). */
export interface ExternalTargets {
  target(db: string, name: string): ExternalTarget | undefined;
  /** The view `producerId` is dropped: forget what it recorded about its deliveries. */
  forget?(producerId: string): Promise<void>;
}
