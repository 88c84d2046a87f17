/**
 * The structured description of a stream: what CREATE STREAM (SQL) or POST /streams (REST) declares,
 * after validation and with the columns Tributary adds (`_tp_time`, `_tp_delta`). It is the value
 * kept in the catalog (kind `stream`, key `db.name`) and everything else in `src/stream` is derived
 * from it: engine DDL, the Proton `create_query`, read SQL, ingest validation.
 *
 * `_tp_sn` is never listed in `columns`: it is always present, hidden from `SELECT *`, and assigned at
 * ingest (see README.md).
 */

export const STREAM_MODES = ['append', 'changelog', 'versioned_kv', 'changelog_kv'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

export const STORAGE_TYPES = ['hybrid', 'streaming', 'memory'] as const;
export type StorageType = (typeof STORAGE_TYPES)[number];

/** An expression in both dialects: as the user wrote it (Proton) and as the engine runs it. */
export interface SqlExpr {
  readonly proton: string;
  readonly engine: string;
}

export interface StreamColumn {
  readonly name: string;
  /** Proton spelling, e.g. `nullable(int64)`. */
  readonly type: string;
  /** ClickHouse spelling, e.g. `Nullable(Int64)`. */
  readonly engineType: string;
  readonly default?: SqlExpr;
  /** An ALIAS column is computed at read time and cannot be written. */
  readonly alias?: SqlExpr;
  /** Codec list without the `CODEC(...)` wrapper, e.g. `ZSTD(1)` or `DoubleDelta, LZ4`. */
  readonly codec?: string;
  readonly comment?: string;
  /** Column TTL (historical store only). */
  readonly ttl?: SqlExpr;
  /** True for columns Tributary added (`_tp_time` when not declared, `_tp_delta`). */
  readonly implicit?: boolean;
}

/** A data-skipping index of the historical store. */
export interface StreamIndex {
  readonly name: string;
  readonly expr: SqlExpr;
  /** Index type as written after TYPE, e.g. `minmax` or `bloom_filter(0.01)`. */
  readonly type: string;
  readonly granularity: number;
}

export interface StreamDefinition {
  readonly db: string;
  readonly name: string;
  /** Stored and ALIAS columns in declaration order, `_tp_time` and `_tp_delta` included. */
  readonly columns: readonly StreamColumn[];
  readonly indexes: readonly StreamIndex[];
  readonly mode: StreamMode;
  readonly primaryKey?: SqlExpr;
  /** The primary key split into its top-level expressions (engine dialect), for latest-per-key reads. */
  readonly keyColumns: readonly string[];
  readonly orderBy: SqlExpr;
  readonly partitionBy?: SqlExpr;
  readonly ttl?: SqlExpr;
  /** The `event_time_column` setting: becomes the DEFAULT of `_tp_time`. */
  readonly eventTimeColumn?: SqlExpr;
  /** kv modes: the row with the largest value wins (ties: the later `_tp_sn`). */
  readonly versionColumn: string;
  readonly storageType: StorageType;
  /** WAL retention; a non-positive value means unlimited. */
  readonly logstoreRetentionBytes: number;
  readonly logstoreRetentionMs: number;
  readonly shards: number;
  /**
   * The tables carry `_tp_shard` (stream-tables.ts): set for streams created with `shards` > 1.
   * Streams created with several shards before Tributary stored shards lack it: their rows are all
   * read as shard 0.
   */
  readonly shardedStorage?: boolean;
  readonly replicationFactor: number;
  readonly description: string;
  /** The `_tp_sn` of the first row of a `memory` stream (default 0; random streams number from 1). */
  readonly firstSn?: number;
  /**
   * Other stream settings as given: Proton's kept and printed, not acted on, and the MergeTree
   * storage settings (merge-tree-settings.ts), which the historical store is created with.
   */
  readonly settings: Readonly<Record<string, string>>;
  /**
   * The table ENGINE a CREATE STREAM named (`Memory`, `MergeTree`, `ReplacingMergeTree(v)`, ...,
   * Proton text), absent for streams of the Stream engine. Such a stream is a plain table, as in
   * Proton: no implicit `_tp_time` (nor its index, nor the ORDER BY / PARTITION BY on it). It is
   * still stored, logged and numbered (`_tp_sn`) as every stream; the engine named is not acted on.
   */
  readonly tableEngine?: string;
  /** The Proton-dialect CREATE STREAM statement printed from this definition. */
  readonly createQuery: string;
  /**
   * Column changes (ALTER STREAM) that WAL records still in the log predate, oldest first: replaying
   * a record older than a change maps its columns through it (wal-recovery.ts). Entries every
   * retained record postdates are pruned at the next ALTER.
   */
  readonly columnHistory?: readonly ColumnHistoryEntry[];
}

/**
 * One column change of ALTER STREAM, as WAL replay needs it. `sn` is the first sequence number
 * written under the changed schema: records whose first sn is below it were written before it.
 */
export type ColumnHistoryEntry =
  | { readonly sn: number; readonly kind: 'add'; readonly column: string }
  | { readonly sn: number; readonly kind: 'drop'; readonly before: StreamColumn }
  | { readonly sn: number; readonly kind: 'modify'; readonly before: StreamColumn }
  | { readonly sn: number; readonly kind: 'rename'; readonly to: string; readonly before: StreamColumn };

/** Proton's defaults for the WAL retention (`STREAM_SETTINGS` in MergeTreeSettings.h). */
export const DEFAULT_RETENTION_BYTES = -1;
export const DEFAULT_RETENTION_MS = 86_400_000;

export const TP_TIME = '_tp_time';
export const TP_SN = '_tp_sn';
export const TP_SHARD = '_tp_shard';
export const TP_DELTA = '_tp_delta';

export function isChangelogMode(mode: StreamMode): boolean {
  return mode === 'changelog' || mode === 'changelog_kv';
}

export function isKvMode(mode: StreamMode): boolean {
  return mode === 'versioned_kv' || mode === 'changelog_kv';
}

/** Does the stream have an event-time column `_tp_time` (declared or added)? */
export function hasEventTime(def: Pick<StreamDefinition, 'columns'>): boolean {
  return def.columns.some((c) => c.name === TP_TIME);
}

/** Columns that hold data (everything but ALIAS columns), in order. */
export function storedColumns(def: StreamDefinition): StreamColumn[] {
  return def.columns.filter((c) => !c.alias);
}

/** The columns `SELECT *` returns (stored columns; `_tp_sn` and ALIAS columns excluded, as in Proton). */
export function visibleColumns(def: StreamDefinition): string[] {
  return storedColumns(def).map((c) => c.name);
}

export function streamKey(db: string, name: string): string {
  return `${db}.${name}`;
}
