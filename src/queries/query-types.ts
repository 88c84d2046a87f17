import type { Actor } from '../catalog/audit.ts';
import type { Analysis as QueryAnalysis } from '../sql/analyzer/analyze.ts';

/** A result column: name and Proton type name. */
export interface ResultColumn {
  name: string;
  type: string;
}

export type QueryStatus = 'running' | 'finished' | 'canceled' | 'failed';

/** The Analysis shape (SQLAnalyzeResult of the contract). */
export type { Analysis as QueryAnalysis } from '../sql/analyzer/analyze.ts';

export interface QueryError {
  code: number;
  message: string;
  system: string;
}

/**
 * The Query object of the contract. Times are epoch milliseconds; `duration` and `response_time`
 * are milliseconds (`response_time`: from start until the first result row was produced).
 * `timeColumns` holds indexes into `result.header` (-1 when the query has no such column).
 */
export interface QueryInfo {
  id: string;
  name: string;
  description: string;
  sql: string;
  tags: string[];
  status: QueryStatus;
  message: string;
  analysis: QueryAnalysis;
  duration: number;
  response_time: number;
  start_time: number;
  end_time: number;
  result: { header: ResultColumn[] };
  sinks: Record<string, { success_count: number; failure_count: number }>;
  timeColumns: { eventTime: number; windowStart: number; windowEnd: number };
  created_at: string;
  created_by: Actor;
  last_updated_at: string;
  last_updated_by: Actor;
  /** Set when status is `failed`: the error as the API would have answered it. */
  error?: QueryError;
}

/** The metrics event payload (sent every second on the event channel). */
export interface QueryMetrics {
  count: number;
  eps: number;
  processing_time: number;
  last_event_time: number;
  response_time: number;
  scanned_rows: number;
  scanned_bytes: number;
  /**
   * Streaming queries: per source stream, the last committed and the last processed sequence
   * number and the rows between them (a query that falls behind under load shows it here).
   */
  lag?: Array<{ stream: string; committed_sn: number; processed_sn: number; lag: number }>;
}

/** How result rows are grouped into events: at most `count` rows, at most `time_ms` apart. */
export interface BatchingPolicy {
  count: number;
  time_ms: number;
}

export const DEFAULT_BATCHING: BatchingPolicy = { count: 1000, time_ms: 100 };
