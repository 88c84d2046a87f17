/** The public API of the stream layer (see README.md). */
export type { ColumnAlteration } from './alter-columns.ts';
export type { CommittedRange, RangeListener } from './committed-range-notifier.ts';
export { printCreateQuery } from './create-query.ts';
export {
  type ColumnSpec,
  defineStream,
  type ExprInput,
  type IndexSpec,
  identityTranslate,
  type StreamSpec,
  type TranslateExpression,
} from './define-stream.ts';
export { INGEST_FORMATS, type IngestFormat, resolveIngestFormat } from './ingest-format.ts';
export {
  type ColumnHistoryEntry,
  isChangelogMode,
  isKvMode,
  type SqlExpr,
  STORAGE_TYPES,
  STREAM_MODES,
  type StorageType,
  type StreamColumn,
  type StreamDefinition,
  type StreamMode,
  storedColumns,
  visibleColumns,
} from './stream-definition.ts';
export { historicalSource, rangeSelect, rangeSource, storedRowsSource } from './stream-reads.ts';
export type { StreamSizes, StreamStatistics } from './stream-stats.ts';
export {
  type DatabaseInfo,
  type IngestInput,
  type IngestOptions,
  type StreamPatch,
  type StreamRecord,
  StreamStore,
  type StreamStoreOptions,
  type StreamTestHooks,
} from './stream-store.ts';
export { historyTable, readTable } from './stream-tables.ts';
export type { CommitResult } from './stream-writer.ts';
