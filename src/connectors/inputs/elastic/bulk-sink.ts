import { isTributaryError } from '../../../errors/tributary-error.ts';

/** One row of the target stream (`_raw string, _index string, _id string`). */
export interface BulkRow {
  _raw: string;
  _index: string;
  _id: string;
}

/**
 * Where an elastic input writes. The input calls `write` once per bulk request with every row of
 * that request, in request order; the items of those rows are answered only after the promise
 * settles. Concurrent requests call `write` concurrently (the ingest path group-commits them).
 *
 * A rejected write fails every row of that request (the request's other items, already failed
 * by the parser, keep their own errors); the HTTP status stays 200 with `errors: true`, as
 * Elasticsearch does. The item status comes from `sinkFailure()` below.
 */
export interface BulkSink {
  write(rows: BulkRow[]): Promise<void>;
}

/** The Elasticsearch item error a rejected write becomes. */
export interface SinkFailure {
  status: 429 | 500;
  type: string;
  reason: string;
}

/**
 * A rejected write is backpressure (429 `es_rejected_execution_exception`, which every shipper
 * retries: the JS bulk helper, Filebeat, Logstash, Vector, the OTel exporter) when the error says
 * so — a TributaryError with HTTP status 429 or 503, or any error with `retryable: true` — and a
 * 500 `exception` otherwise (Filebeat, Logstash and Vector retry it; the JS bulk helper drops it).
 */
export function sinkFailure(e: unknown): SinkFailure {
  const reason = e instanceof Error ? e.message : String(e);
  const retryable =
    (isTributaryError(e) && (e.status === 429 || e.status === 503)) ||
    (typeof e === 'object' && e !== null && (e as { retryable?: unknown }).retryable === true);
  return retryable
    ? { status: 429, type: 'es_rejected_execution_exception', reason }
    : { status: 500, type: 'exception', reason };
}
