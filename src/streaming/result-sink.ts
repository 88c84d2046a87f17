/**
 * Where a running query puts its rows. A row is the JSON text of one array in header order
 * (exactly what the engine's JSONCompactEachRow writes, so rows are never re-parsed on the way out).
 */
export interface ResultSink {
  /**
   * Hand over rows; the promise resolves when the consumer can take more (backpressure).
   * A durable execution (durability.ts) tags each hand-over with its place in the execution, the
   * same on a replay after a crash, so that a consumer can drop what it already has.
   */
  rows(rows: readonly string[], tag?: OutputTag): void | Promise<void>;
}

/**
 * Where a hand-over of rows comes from in a durable execution: the journal entry (event) that
 * produced it and its index among that event's hand-overs. Tags grow strictly in (seq, part) order.
 */
export interface OutputTag {
  readonly seq: number;
  readonly part: number;
  /** The branch of a streaming UNION that made it (streaming-union.ts); each has its own tags. */
  readonly branch?: number;
}

/** Whether tag `a` comes strictly after tag `b`. */
export function tagAfter(a: OutputTag, b: OutputTag | undefined): boolean {
  return b === undefined || a.seq > b.seq || (a.seq === b.seq && a.part > b.part);
}

/** Statistics an execution reports as it goes, for the metrics event. */
export interface ExecutionProgress {
  scannedRows: number;
  scannedBytes: number;
  /** Largest event time seen in the output, epoch ms (0 when unknown). */
  lastEventTime: number;
  /** Streaming: per source stream, how far it is committed and how far the query has processed it. */
  sources?: SourceLag[];
}

/** A source of a streaming query: its lag is `committedSn - processedSn` rows. */
export interface SourceLag {
  /** `db.name`. */
  stream: string;
  committedSn: number;
  processedSn: number;
}

/** A step of the execution, for the query pipeline route. */
export interface PipelineStep {
  id: number;
  name: string;
  status: string;
  processedBytes: number;
  processingTimeNs: number;
  /** Ids of the steps this one reads from. */
  inputs: number[];
  /** A source node: the stream's committed and processed positions. */
  source?: SourceLag;
}
