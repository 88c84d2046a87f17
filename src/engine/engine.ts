/**
 * The Engine: everything Tributary asks of the columnar engine. The chDB implementation lives in
 * `chdb-engine.ts`; a ClickHouse-server implementation can slot in behind the same interface
 * (DESIGN.md §9). Nothing here imports the rest of Tributary.
 */

export type EngineSettings = Readonly<Record<string, string | number | boolean>>;

/**
 * Which sessions a call runs on. `system` serves the catalog and ingest commits (short,
 * latency-sensitive calls); `stream` serves the steps of streaming queries and materialized views;
 * `user` serves ad-hoc historical queries, which may run long. A session runs one statement at a
 * time, so keeping them apart means neither a long user query nor a crowd of streaming steps ever
 * queues a commit (chdb-notes.md, addendum; issue 12 "ingest first").
 */
export type EngineLane = 'system' | 'stream' | 'user';

export interface EngineQueryOptions {
  /** Output format; default `JSONCompactEachRow`. */
  format?: string;
  /** Settings appended to the statement as a SETTINGS clause. */
  settings?: EngineSettings;
  /** Cancel the query inside the engine after this many milliseconds (error QUERY_TIMEOUT). */
  timeoutMs?: number;
  /** Aborting cancels the query inside the engine (error QUERY_CANCELED). */
  signal?: AbortSignal;
  lane?: EngineLane;
  /**
   * The statement carries SQL derived from a user's query: run it with the engine's `readonly = 1`,
   * the second enforcement of the engine allow-list (src/sql/translator/engine-allow-list.ts is the
   * first). It stops file/url/remote/executable/... table functions and INSERT INTO FUNCTION even
   * if a translator bug lets one through. Only for statements that read (SELECT, DESCRIBE).
   */
  userSql?: boolean;
}

export interface EngineResult {
  /** The result in the requested format. */
  text(): string;
  bytes(): Uint8Array;
  /** Engine-reported elapsed time of the query, in milliseconds. */
  readonly elapsedMs: number;
  readonly rowsRead: number;
  readonly bytesRead: number;
}

export interface EngineChunk {
  readonly rows: number;
  text(): string;
}

export type InsertFormat = 'JSONEachRow' | 'JSONCompactEachRow' | 'TSV' | 'CSV';

export interface EngineInsertOptions {
  format: InsertFormat;
  columns?: readonly string[];
  settings?: EngineSettings;
  lane?: EngineLane;
}

export interface EngineInsertResult {
  rowsWritten: number;
  elapsedMs: number;
}

export interface EngineInfo {
  version: string;
}

export interface Engine {
  /** The data directory the engine stores everything under. */
  readonly dataPath: string;
  /** Run one statement and return its whole result. */
  query(sql: string, options?: EngineQueryOptions): Promise<EngineResult>;
  /** Run one statement and hand back its result in chunks, as the engine produces them. */
  stream(sql: string, options?: EngineQueryOptions): AsyncIterable<EngineChunk>;
  /** Insert a payload that is already in `format` (the engine parses it; no SQL string is built). */
  insert(table: string, payload: Buffer | string, options: EngineInsertOptions): Promise<EngineInsertResult>;
  /** Health check: answers the engine's version, or throws ENGINE_UNAVAILABLE. */
  ping(): Promise<EngineInfo>;
  /** Number of statements in flight and waiting, for metrics. */
  load(): { running: number; waiting: number };
  /** Close every session; later calls fail with ENGINE_UNAVAILABLE. */
  close(): Promise<void>;
}
