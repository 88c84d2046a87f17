import type { ResultColumn } from '../queries/query-types.ts';
import type { ResultSink } from '../streaming/result-sink.ts';
import type { PauseGate } from './pause-gate.ts';
import type { WriteCounters } from './target-writer.ts';

/** The sink of a running materialized view: its target stream's writer, or an external table's. */
export interface ViewWriter extends ResultSink {
  readonly counters: WriteCounters;
  /** The result header of the execution about to run (set before each run). */
  setHeader(header: readonly ResultColumn[]): void;
  /** The view stops (server stop, pause of the runner): timers end, nothing is lost. */
  close?(): Promise<void>;
  /** The view is dropped: what the writer still buffers is written out, then its buffer goes. */
  discard?(): Promise<void>;
}

/**
 * Targets of `CREATE MATERIALIZED VIEW v INTO t` that are not streams (external tables): given to
 * the materialized views by their owner (src/external), which views do not import.
 */
export interface ExternalTargets {
  has(db: string, name: string): boolean;
  /** Refuse a view whose result columns do not fit the target (throws). */
  checkInto(db: string, name: string, header: readonly ResultColumn[]): void;
  writer(options: { db: string; target: string; viewId: string; gate: PauseGate }): ViewWriter;
}
