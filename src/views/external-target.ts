import type { ResultColumn } from '../queries/query-types.ts';
import type { ResultSink } from '../streaming/result-sink.ts';
import type { PauseGate } from './pause-gate.ts';
import type { WriteCounters } from './target-writer.ts';

/** Where a materialized view's rows go: its target stream's writer, or an external target's. */
export interface ViewWriter extends ResultSink {
  readonly counters: WriteCounters;
  /** The result header of the execution about to run. */
  setHeader(header: readonly ResultColumn[]): void;
  /** Stop at once what the writer is waiting on (e.g. a retry backoff): the view is stopping. */
  close?(): void;
}

/**
 * A materialized view's INTO target that is not a stream (an http external stream): its columns
 * (the view's result columns must be among them) and the writer of one view into it.
 */
export interface ExternalTarget {
  readonly columns: readonly { name: string; type: string }[];
  writer(o: { producerId: string; gate: PauseGate }): ViewWriter;
}

/** The external targets by name (src/external/streams implements it). */
export interface ExternalTargets {
  target(db: string, name: string): ExternalTarget | undefined;
  /** The view `producerId` is dropped: forget what it recorded about its deliveries. */
  forget?(producerId: string): Promise<void>;
}
