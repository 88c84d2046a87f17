import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { type StreamColumn, type StreamDefinition, TP_SHARD, TP_SN, TP_TIME } from './stream-definition.ts';

/**
 * The engine tables of a stream and their DDL (README.md, "Tables").
 *
 * - hybrid: `db`.`name` is a Merge table (what every read goes through) over two tables: the
 *   front `db`.`.tp_front.name`, a Buffer without destination that every write goes into, and the
 *   MergeTree `db`.`.tp_history.name` (the historical store). Tributary moves the front's rows into
 *   the MergeTree itself (`moveFrontStatements`). A read of a sequence range that lies wholly in
 *   the front reads the front alone (`rangeMarker`), so the engine does not plan a MergeTree read
 *   for it. A leading dot cannot start a stream name, so these names never collide with a user's
 *   stream.
 * - streaming / memory: `db`.`name` is a Memory table (size-capped for `streaming`), read and written.
 *
 * Sequence numbers and the commit time reach the engine through the insert's `log_comment`
 * setting (`tp:<first sn>:<commit time ms>`): `_tp_sn` is computed as first sn + the row's position
 * in the insert, and an implicit `_tp_time` (DEFAULT now64) takes the commit time. Replaying a WAL
 * record with the same comment therefore reproduces the same rows exactly. A stream with several
 * shards (`shardedStorage`) adds the insert's shard as a fourth field (`tp:<sn>:<ms>:<shard>`),
 * which its `_tp_shard` column takes.
 */

export const HISTORY_PREFIX = '.tp_history.';
export const FRONT_PREFIX = '.tp_front.';
/** Memory cap of a `streaming`/`memory` stream whose logstore_retention_bytes is unlimited. */
export const DEFAULT_MEMORY_CAP_BYTES = 1024 * 1024 * 1024;

export interface BufferPolicy {
  minTimeS: number;
  maxTimeS: number;
  minRows: number;
  maxRows: number;
  minBytes: number;
  maxBytes: number;
}

/**
 * When Tributary flushes a Buffer (BufferFlusher): a second has passed and 100k rows / 16 MB are
 * buffered, or after 10 s, 4M rows or 256 MB, whichever comes first.
 */
export const DEFAULT_BUFFER_POLICY: BufferPolicy = {
  minTimeS: 1,
  maxTimeS: 10,
  minRows: 100_000,
  maxRows: 4_000_000,
  minBytes: 16 * 1024 * 1024,
  maxBytes: 256 * 1024 * 1024,
};

const COMMENT = "getSettingOrDefault('log_comment', '')";
const FROM_TRIBUTARY = `startsWith(${COMMENT}, 'tp:')`;
/** `_tp_sn` of a row: the insert's first sequence number plus the row's position; -1 for foreign writes. */
export const SN_EXPR = `if(${FROM_TRIBUTARY}, toInt64(splitByChar(':', ${COMMENT})[2]) + rowNumberInAllBlocks(), -1)`;
/** `_tp_shard` of a row of a sharded stream: the insert's shard (0 when the comment has none). */
export const SHARD_EXPR = `toInt32OrZero(arrayElement(splitByChar(':', ${COMMENT}), 4))`;
const COMMIT_TIME_EXPR = `fromUnixTimestamp64Milli(toInt64(splitByChar(':', ${COMMENT})[3]), 'UTC')`;

/**
 * Settings of every insert into a stream, pinned so the checks of value-checks.ts keep matching
 * what the engine reads: ISO 8601 and other date-time spellings (chDB's default, made explicit).
 */
export const INSERT_SETTINGS = { date_time_input_format: 'best_effort' } as const;

/** The engine's `min_chunk_bytes_for_parallel_parsing` default: smaller payloads are one chunk. */
const PARALLEL_PARSING_CHUNK = 10 * 1024 * 1024;

/**
 * INSERT_SETTINGS for an insert of `bytes` bytes: below one parallel-parsing chunk the engine's
 * parallel parsing has nothing to split and only adds its threads' hand-offs, so it is turned off
 * (measured, min of 60 inserts into a stream's Buffer at load ~8: 1 row 1.71 against 2.18 ms,
 * 10,000 rows 6.84 against 7.70 ms). The values read are the same either way.
 */
export function insertSettings(bytes: number): Record<string, string | number> {
  return bytes < PARALLEL_PARSING_CHUNK
    ? { ...INSERT_SETTINGS, input_format_parallel_parsing: 0 }
    : { ...INSERT_SETTINGS };
}

/**
 * The `log_comment` of an insert whose rows start at `firstSn`, committed at `timeMs` (into
 * `shard`, for a stream with several shards).
 */
export function ingestComment(firstSn: number, timeMs: number, shard?: number): string {
  return shard === undefined ? `tp:${firstSn}:${timeMs}` : `tp:${firstSn}:${timeMs}:${shard}`;
}

export function qualify(db: string, table: string): string {
  return `${quoteIdent(db)}.${quoteIdent(table)}`;
}

/** The user-visible table every read goes through (Merge for hybrid streams, else Memory). */
export function readTable(def: Pick<StreamDefinition, 'db' | 'name'>): string {
  return qualify(def.db, def.name);
}

export function historyTableName(name: string): string {
  return `${HISTORY_PREFIX}${name}`;
}

export function frontTableName(name: string): string {
  return `${FRONT_PREFIX}${name}`;
}

/** The MergeTree of a hybrid stream; undefined for streaming/memory streams. */
export function historyTable(def: Pick<StreamDefinition, 'db' | 'name' | 'storageType'>): string | undefined {
  return def.storageType === 'hybrid' ? qualify(def.db, historyTableName(def.name)) : undefined;
}

/** The table every write goes into: the front Buffer of a hybrid stream, else its Memory table. */
export function writeTable(def: Pick<StreamDefinition, 'db' | 'name' | 'storageType'>): string {
  return def.storageType === 'hybrid' ? qualify(def.db, frontTableName(def.name)) : readTable(def);
}

/** `_tp_time` whose default is the insert time: Tributary fills it with the commit time instead. */
export function isCommitTimeDefault(c: StreamColumn): boolean {
  if (c.name !== TP_TIME || !c.default) return false;
  return /^(now64\s*\(\s*(\d\s*(,\s*'[^']*'\s*)?)?\)|now\s*\(\s*\))$/i.test(c.default.engine.trim());
}

/** A column's definition in engine DDL (TTL only for the MergeTree). */
export function columnDdl(c: StreamColumn, withTtl: boolean): string {
  let line = `${quoteIdent(c.name)} ${c.engineType}`;
  if (c.alias) line += ` ALIAS ${c.alias.engine}`;
  else if (c.default) {
    line += isCommitTimeDefault(c)
      ? ` DEFAULT if(${FROM_TRIBUTARY}, ${COMMIT_TIME_EXPR}, ${c.default.engine})`
      : ` DEFAULT ${c.default.engine}`;
  }
  if (c.comment) line += ` COMMENT ${quoteString(c.comment)}`;
  if (c.codec) line += ` CODEC(${c.codec})`;
  if (withTtl && c.ttl) line += ` TTL ${c.ttl.engine}`;
  return line;
}

function memoryCap(def: StreamDefinition): number {
  return def.logstoreRetentionBytes > 0 ? def.logstoreRetentionBytes : DEFAULT_MEMORY_CAP_BYTES;
}

/**
 * `_tp_shard` of a sharded stream's tables, like `_tp_sn`: MATERIALIZED in the front table (so
 * `SELECT *` hides it), an ordinary column in the MergeTree (a Buffer flush carries it over).
 */
function shardColumn(def: StreamDefinition, kind: 'DEFAULT' | 'MATERIALIZED'): string[] {
  return def.shardedStorage ? [`${quoteIdent(TP_SHARD)} Int32 ${kind} ${SHARD_EXPR}`] : [];
}

/** A setting's value in engine SQL: a number as it is, anything else a string literal. */
function settingLiteral(v: string): string {
  return /^-?\d+(\.\d+)?$/.test(v) ? v : quoteString(v);
}

/** CREATE TABLE statements of a stream, in the order they must run. */
export function createStatements(def: StreamDefinition): string[] {
  const front = readTable(def);
  if (def.storageType !== 'hybrid') {
    const cols = [
      ...def.columns.map((c) => columnDdl(c, false)),
      `${quoteIdent(TP_SN)} Int64 MATERIALIZED ${SN_EXPR}`,
      ...shardColumn(def, 'MATERIALIZED'),
    ];
    return [
      `CREATE TABLE ${front} (\n  ${cols.join(',\n  ')}\n) ENGINE = Memory SETTINGS max_bytes_to_keep = ${memoryCap(def)}`,
    ];
  }
  const history = historyTable(def) as string;
  const histCols = [
    ...def.columns.map((c) => columnDdl(c, true)),
    `${quoteIdent(TP_SN)} Int64 DEFAULT ${SN_EXPR}`,
    ...shardColumn(def, 'DEFAULT'),
    ...def.indexes.map(
      (ix) => `INDEX ${quoteIdent(ix.name)} ${ix.expr.engine} TYPE ${ix.type} GRANULARITY ${ix.granularity}`,
    ),
    `INDEX ${quoteIdent('_tp_sn_index')} ${quoteIdent(TP_SN)} TYPE minmax GRANULARITY 1`,
  ];
  let mergeTree = `CREATE TABLE ${history} (\n  ${histCols.join(',\n  ')}\n) ENGINE = MergeTree`;
  if (def.partitionBy) mergeTree += `\nPARTITION BY ${def.partitionBy.engine}`;
  if (def.primaryKey && def.primaryKey.engine !== def.orderBy.engine)
    mergeTree += `\nPRIMARY KEY ${def.primaryKey.engine}`;
  mergeTree += `\nORDER BY ${def.orderBy.engine}`;
  if (def.ttl) mergeTree += `\nTTL ${def.ttl.engine}`;
  const settings = [
    ...(def.ttl || def.columns.some((c) => c.ttl) ? [TTL_AS_PROTON] : []),
    ...Object.entries(def.engineSettings ?? {}).map(([k, v]) => `${k} = ${settingLiteral(v)}`),
  ];
  if (settings.length) mergeTree += `\nSETTINGS ${settings.join(', ')}`;
  return [mergeTree, ...frontStatements(def)];
}

/**
 * The Buffer engine's thresholds: never reached, so the engine never flushes (and, having no
 * destination, would drop) the front's rows on its own, and an insert never bypasses it; Tributary
 * moves them into the MergeTree under the stream's FlushLock instead. One layer, so the front's rows
 * stay in sequence-number order.
 */
export const NEVER_FLUSH_PARAMS =
  '1, 1000000000, 1000000000, 1000000000000000, 1000000000000000, 1000000000000000000, 1000000000000000000';

/** The columns of a hybrid stream's front and Merge tables. */
function frontColumns(def: StreamDefinition): string[] {
  return [
    ...def.columns.map((c) => columnDdl(c, false)),
    `${quoteIdent(TP_SN)} Int64 MATERIALIZED ${SN_EXPR}`,
    ...shardColumn(def, 'MATERIALIZED'),
  ];
}

/**
 * An RE2 pattern matching exactly the front and history tables of stream `name` (`\Q...\E`
 * quotes the name; a `\E` inside it is closed, escaped and reopened).
 */
export function streamTablesPattern(name: string): string {
  const quoted = `\\Q${name.replaceAll('\\E', '\\E\\\\E\\Q')}\\E`;
  return `^\\.tp_(front|history)\\.${quoted}$`;
}

/**
 * CREATE TABLE statements of a hybrid stream's front (a Buffer without destination) and of the
 * Merge table over the front and the MergeTree that every read goes through, in that order.
 */
export function frontStatements(def: StreamDefinition): string[] {
  const cols = frontColumns(def).join(',\n  ');
  return [
    `CREATE TABLE ${writeTable(def)} (\n  ${cols}\n) ENGINE = Buffer('', '', ${NEVER_FLUSH_PARAMS})`,
    `CREATE TABLE ${readTable(def)} (\n  ${cols}\n) ENGINE = Merge(${quoteString(def.db)}, ${quoteString(streamTablesPattern(def.name))})`,
  ];
}

/** DROP statements of a hybrid stream's Merge and front tables (the front's rows are lost). */
export function frontDropStatements(def: Pick<StreamDefinition, 'db' | 'name' | 'storageType'>): string[] {
  return [`DROP TABLE IF EXISTS ${readTable(def)} SYNC`, `DROP TABLE IF EXISTS ${writeTable(def)} SYNC`];
}

/** The stored columns a move carries from the front into the MergeTree, `_tp_sn` and `_tp_shard` included. */
function movedColumns(def: StreamDefinition): string[] {
  return [
    ...def.columns.filter((c) => !c.alias).map((c) => quoteIdent(c.name)),
    quoteIdent(TP_SN),
    ...(def.shardedStorage ? [quoteIdent(TP_SHARD)] : []),
  ];
}

/**
 * The statements that move every row of a hybrid stream's front into its MergeTree, then empty
 * the front (a Buffer without destination drops its rows when told to flush). They must run with
 * reads and writes of the stream held back: between the two, the rows are in both tables.
 */
export function moveFrontStatements(def: StreamDefinition): string[] {
  const cols = movedColumns(def).join(', ');
  return [
    `INSERT INTO ${historyTable(def)} (${cols}) SELECT ${cols} FROM ${writeTable(def)}`,
    `OPTIMIZE TABLE ${writeTable(def)}`,
  ];
}

/** Removes from the MergeTree the rows after `sn`: what a move that failed half-way left behind. */
export function undoMoveStatement(def: StreamDefinition, sn: number): string {
  return `ALTER TABLE ${historyTable(def)} DELETE WHERE ${quoteIdent(TP_SN)} > ${sn} SETTINGS mutations_sync = 1`;
}

/** DROP statements, the Merge and front tables first. */
export function dropStatements(def: StreamDefinition): string[] {
  const history = historyTable(def);
  if (!history) return [`DROP TABLE IF EXISTS ${readTable(def)} SYNC`];
  return [...frontDropStatements(def), `DROP TABLE IF EXISTS ${history} SYNC`];
}

/**
 * Proton accepts a TTL that reads no column (`TTL now() - 1d`: every row is expired); the engine
 * refuses it (36) unless told otherwise, per statement (0023_mv id 3).
 */
const TTL_AS_PROTON = 'allow_suspicious_ttl_expressions = 1';

/** The statement that changes the historical store's TTL (hybrid streams only). */
export function modifyTtlStatement(def: StreamDefinition): string | undefined {
  const history = historyTable(def);
  if (!history) return undefined;
  return def.ttl
    ? `ALTER TABLE ${history} MODIFY TTL ${def.ttl.engine} SETTINGS ${TTL_AS_PROTON}`
    : `ALTER TABLE ${history} REMOVE TTL`;
}

/** Memory streams: the cap follows logstore_retention_bytes. */
export function modifyMemoryCapStatement(def: StreamDefinition): string | undefined {
  if (def.storageType === 'hybrid') return undefined;
  return `ALTER TABLE ${readTable(def)} MODIFY SETTING max_bytes_to_keep = ${memoryCap(def)}`;
}
