import { isTributaryError } from '../../errors/tributary-error.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import type { BulkRow, BulkSink } from './elastic/bulk-sink.ts';

/** The columns an elastic input writes, in the order of its rows. */
export const BULK_COLUMNS = ['_raw', '_index', '_id'] as const;
const COLUMNS = [...BULK_COLUMNS];

/**
 * Engine errors that say "not now" rather than "never": the write is answered 429 (every shipper
 * retries it) instead of 500. MEMORY_LIMIT_EXCEEDED, TOO_MANY_PARTS, TOO_MANY_SIMULTANEOUS_QUERIES,
 * TIMEOUT_EXCEEDED.
 */
const RETRYABLE_ENGINE_CODES = new Set([241, 252, 202, 159]);

/**
 * Where an input's bulk rows go: the target stream, through the stream layer's ingest (validation,
 * group commit, WAL, engine). One `ingest` call per bulk request, so a request is all-or-nothing in
 * the stream and its rows get contiguous sequence numbers.
 *
 * Failures are rethrown for `sinkFailure` (elastic/bulk-sink.ts): a stream that cannot take writes
 * for now (INGEST_STREAM_FAILED 503, an unavailable engine, an engine error in
 * RETRYABLE_ENGINE_CODES) is marked `retryable` and becomes a 429; anything else (the target stream
 * was dropped, a value the engine refused) a 500.
 */
export class StreamBulkSink implements BulkSink {
  constructor(
    private readonly streams: StreamStore,
    readonly db: string,
    readonly stream: string,
  ) {}

  async write(rows: BulkRow[]): Promise<void> {
    const values: unknown[][] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      values[i] = [r._raw, r._index, r._id];
    }
    try {
      await this.streams.ingest(
        this.db,
        this.stream,
        { columns: COLUMNS, rows: values },
        { requiredColumns: COLUMNS },
      );
    } catch (e) {
      throw writeFailure(e, this.db === 'default' ? this.stream : `${this.db}.${this.stream}`);
    }
  }
}

/** The error an item shows: the stream named, retryable when it is only for now. */
function writeFailure(e: unknown, stream: string): Error {
  const message = e instanceof Error ? e.message : String(e);
  const retryable =
    (isTributaryError(e) &&
      (e.status === 429 ||
        e.status === 503 ||
        (e.system === 'timeplusd' && RETRYABLE_ENGINE_CODES.has(e.code)))) ||
    (typeof e === 'object' && e !== null && (e as { retryable?: unknown }).retryable === true);
  const out = new Error(`stream ${stream} refused the write: ${message}`, { cause: e });
  return Object.assign(out, { retryable });
}
