/**
 * Where a running query puts its rows. A row is the JSON text of one array in header order
 * (exactly what the engine's JSONCompactEachRow writes, so rows are never re-parsed on the way out).
 */
export interface ResultSink {
  /** Hand over rows; the promise resolves when the consumer can take more (backpressure). */
  rows(rows: readonly string[]): void | Promise<void>;
}

/** Statistics an execution reports as it goes, for the metrics event. */
export interface ExecutionProgress {
  scannedRows: number;
  scannedBytes: number;
  /** Largest event time seen in the output, epoch ms (0 when unknown). */
  lastEventTime: number;
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
}
