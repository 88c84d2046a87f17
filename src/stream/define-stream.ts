import { err } from '../errors/tributary-error.ts';
import { parseDataType, TypeSyntaxError } from '../sql/types/data-type.ts';
import { toClickHouseType, toProtonType, UnknownTypeError } from '../sql/types/proton-types.ts';
import { printCreateQuery } from './create-query.ts';
import { STREAM_STORAGE_SETTINGS, storageSettingValue } from './merge-tree-settings.ts';
import { bareIdentifier, splitTopLevel, stripOuterParens } from './sql-text.ts';
import {
  DEFAULT_RETENTION_BYTES,
  DEFAULT_RETENTION_MS,
  isChangelogMode,
  isKvMode,
  type SqlExpr,
  STORAGE_TYPES,
  STREAM_MODES,
  type StorageType,
  type StreamColumn,
  type StreamDefinition,
  type StreamIndex,
  type StreamMode,
  TP_DELTA,
  TP_SN,
  TP_TIME,
} from './stream-definition.ts';
import { STREAM_TYPE_CHECKS, typeCheckValue } from './table-check-settings.ts';

/** Proton SQL in, engine SQL out. The SQL layer injects the real translator; identity until then. */
export type TranslateExpression = (protonSql: string) => string;
export const identityTranslate: TranslateExpression = (sql) => sql;

/** An expression as Proton text (translated on the way in) or already in both dialects. */
export type ExprInput = string | SqlExpr;

export interface ColumnSpec {
  name: string;
  /** Either spelling: `int64`, `Int64`, `bigint`. */
  type: string;
  default?: ExprInput;
  alias?: ExprInput;
  /** `ZSTD(1)` or `CODEC(ZSTD(1))`. */
  codec?: string;
  comment?: string;
  ttl?: ExprInput;
}

export interface IndexSpec {
  name: string;
  expr: ExprInput;
  type: string;
  granularity?: number;
}

/** What CREATE STREAM or POST /streams declares, before validation. */
export interface StreamSpec {
  db?: string;
  name: string;
  columns: ColumnSpec[];
  indexes?: IndexSpec[];
  mode?: string;
  primaryKey?: ExprInput;
  orderBy?: ExprInput;
  partitionBy?: ExprInput;
  ttl?: ExprInput;
  eventTimeColumn?: ExprInput;
  versionColumn?: string;
  storageType?: string;
  logstoreRetentionBytes?: number;
  logstoreRetentionMs?: number;
  shards?: number;
  replicationFactor?: number;
  description?: string;
  /**
   * The table ENGINE of CREATE STREAM (Proton text, e.g. `Memory`, `MergeTree()`), when it names a
   * table engine rather than the Stream engine: the stream is then a plain table, as in Proton (no
   * implicit `_tp_time`, no default ORDER BY / PARTITION BY on it; mode append only).
   */
  tableEngine?: string;
  /** The `_tp_sn` of the first row of a `memory` stream (default 0; random streams number from 1). */
  firstSn?: number;
  /**
   * The implicit target of a materialized view: its columns are the view's result columns, so
   * `window_start` / `window_end` are allowed (as in Proton's inner streams of window views).
   */
  windowColumnsAllowed?: boolean;
  /**
   * The implicit target of a materialized view whose result selects `_tp_delta`: an ordinary
   * int8 column of an append stream, as in Proton's inner streams (the sign is stored, not acted on).
   */
  deltaColumnAllowed?: boolean;
  /**
   * The SETTINGS clause as written. The stream settings above may also arrive here (`mode`,
   * `event_time_column`, `storage_type`, `logstore_retention_*`, `version_column`, `shards`,
   * `replicas`/`replication_factor`); a typed field wins over the same setting.
   */
  settings?: Record<string, string | number | boolean>;
}

export interface DefineOptions {
  translateExpression?: TranslateExpression;
}

/** Stream settings of Proton v1.6.1 that Tributary keeps and prints but does not act on. */
const PASSIVE_SETTINGS = new Set([
  'keep_versions',
  'sharding_expr',
  'logstore_codec',
  'logstore_flush_messages',
  'logstore_flush_ms',
  'flush_threshold_count',
  'flush_threshold_ms',
  'flush_threshold_bytes',
]);
const ACTIVE_SETTINGS = [
  'mode',
  'event_time_column',
  'storage_type',
  'logstore_retention_bytes',
  'logstore_retention_ms',
  'version_column',
  'shards',
  'replicas',
  'replication_factor',
];

const RESERVED_NAMES = new Set(['window_start', 'window_end']);
const NOW64_PROTON = "now64(3, 'UTC')";
const TP_TIME_CODEC = 'DoubleDelta, LZ4';

function bad(detail: string): never {
  throw err('BAD_ARGUMENTS', { detail });
}

/**
 * The engine names a table's files after it, escaped (letters, digits and `_` stay; every other
 * UTF-8 byte becomes `%XX`), and a file name has at most 255 bytes; derived tables add a prefix
 * such as `.tp_history.`. A name whose escaped form passes this is safe.
 */
const MAX_ESCAPED_NAME = 200;

function escapedLength(name: string): number {
  let n = 0;
  for (const byte of Buffer.from(name, 'utf8')) n += /[A-Za-z0-9_]/.test(String.fromCharCode(byte)) ? 1 : 3;
  return n;
}

export function checkName(kind: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) bad(`${kind} name must be a non-empty string`);
  if (name.length > 255) bad(`${kind} name ${name.slice(0, 40)}... is longer than 255 characters`);
  if (escapedLength(name) > MAX_ESCAPED_NAME)
    bad(
      `${kind} name ${name.slice(0, 40)}... is too long for the engine's file names (at most ${MAX_ESCAPED_NAME} bytes once escaped: letters, digits and _ count 1, every other UTF-8 byte 3)`,
    );
  if (name.startsWith('.') || /[\0/\\]/.test(name))
    bad(`${kind} name ${JSON.stringify(name)} is not allowed`);
  return name;
}

/**
 * `checkName` for a name the engine gives a table or database: the engine reads one with `*`,
 * `?` or `{` as a pattern of file names and fails (636 or 57, measured).
 */
export function checkTableName(kind: string, name: unknown): string {
  const checked = checkName(kind, name);
  if (/[*?{]/.test(checked))
    bad(
      `${kind} name ${JSON.stringify(checked)} is not allowed: the engine cannot name a table with *, ? or {`,
    );
  return checked;
}

/** Normalise a type to both spellings, or throw UNKNOWN_TYPE / BAD_ARGUMENTS. */
export function normaliseType(type: string, column: string): { type: string; engineType: string } {
  try {
    return { type: toProtonType(type), engineType: toClickHouseType(type) };
  } catch (e) {
    if (e instanceof UnknownTypeError)
      throw err('UNKNOWN_TYPE', { name: e.typeName, hint: ` (column ${column})` });
    if (e instanceof TypeSyntaxError) bad(`Invalid type of column ${column}: ${type} (${e.message})`);
    throw e;
  }
}

export function normaliseCodec(codec: string | undefined): string | undefined {
  if (codec === undefined) return undefined;
  const t = codec.trim();
  if (t === '') return undefined;
  const m = /^codec\s*\(([\s\S]*)\)$/i.exec(t);
  return m ? (m[1] ?? '').trim() : t;
}

/** An expression given as Proton text (translated) or in both dialects; undefined when empty. */
export function exprOf(input: ExprInput | undefined, translate: TranslateExpression): SqlExpr | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== 'string') return input;
  const proton = input.trim();
  if (proton === '') return undefined;
  return { proton, engine: translate(proton) };
}

/**
 * One declared column: name checked, type in both spellings, expressions translated. Reserved
 * names are the caller's to check (CREATE and ALTER differ).
 */
export function columnFromSpec(c: ColumnSpec, translate: TranslateExpression): StreamColumn {
  const name = checkName('Column', c.name);
  const { type, engineType } = normaliseType(c.type, name);
  if (c.default !== undefined && c.alias !== undefined)
    bad(`Column ${name} cannot have both DEFAULT and ALIAS`);
  const dflt = exprOf(c.default, translate);
  const alias = exprOf(c.alias, translate);
  const codec = normaliseCodec(c.codec);
  const ttl = exprOf(c.ttl, translate);
  return {
    name,
    type,
    engineType,
    ...(dflt ? { default: dflt } : {}),
    ...(alias ? { alias } : {}),
    ...(codec ? { codec } : {}),
    ...(c.comment ? { comment: c.comment } : {}),
    ...(ttl ? { ttl } : {}),
  };
}

/** Names a user column cannot take: `_tp_*` (Tributary's) and the window columns. */
export function reservedColumnReason(name: string): string | undefined {
  if (name.startsWith('_tp_')) return `Column name ${name} is reserved (names starting with _tp_)`;
  if (RESERVED_NAMES.has(name)) return `Column name ${name} is reserved`;
  return undefined;
}

function settingText(v: string | number | boolean | undefined): string | undefined {
  if (v === undefined) return undefined;
  return typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
}

function settingInt(name: string, v: string | number | boolean | undefined): number | undefined {
  const t = settingText(v);
  if (t === undefined) return undefined;
  if (!/^[-+]?\d+$/.test(t.trim())) bad(`Setting ${name} must be an integer, got ${t}`);
  return Number(t);
}

/**
 * Validate a stream declaration and complete it the way Proton does (streaming-sql-notes.md §1.1):
 * add `_tp_time` (and `_tp_delta` for changelog modes), check reserved names and key requirements,
 * default ORDER BY / PARTITION BY, and print the `create_query`. A stream with a table ENGINE
 * (`spec.tableEngine`) is completed as Proton completes a plain table: nothing is added to it.
 */
export function defineStream(spec: StreamSpec, options: DefineOptions = {}): StreamDefinition {
  const translate = options.translateExpression ?? identityTranslate;
  const expr = (input: ExprInput | undefined): SqlExpr | undefined => exprOf(input, translate);

  const db = checkTableName('Database', spec.db ?? 'default');
  const name = checkTableName('Stream', spec.name);
  const settings = { ...(spec.settings ?? {}) };
  const tableEngine = spec.tableEngine?.trim() || undefined;
  for (const key of Object.keys(settings)) {
    if (
      !ACTIVE_SETTINGS.includes(key) &&
      !PASSIVE_SETTINGS.has(key) &&
      !STREAM_STORAGE_SETTINGS.has(key) &&
      !STREAM_TYPE_CHECKS.has(key)
    ) {
      const known = [...ACTIVE_SETTINGS, ...PASSIVE_SETTINGS, ...STREAM_STORAGE_SETTINGS];
      const near = known.find((k) => k.includes(key) || key.includes(k));
      throw err('UNKNOWN_SETTING', { name: key, hint: near ? `, maybe you meant ${near}` : '' });
    }
  }

  const mode = (spec.mode ?? settingText(settings.mode) ?? 'append') as StreamMode;
  if (!STREAM_MODES.includes(mode))
    bad(`Unknown stream mode '${mode}'; expected one of ${STREAM_MODES.join(', ')}`);
  const storageType = (spec.storageType ?? settingText(settings.storage_type) ?? 'hybrid') as StorageType;
  if (!STORAGE_TYPES.includes(storageType)) {
    bad(`Unknown storage_type '${storageType}'; expected one of ${STORAGE_TYPES.join(', ')}`);
  }
  const eventTime = expr(spec.eventTimeColumn ?? settingText(settings.event_time_column));
  if (tableEngine) {
    if (mode !== 'append')
      bad(
        `Stream ${name} has ENGINE = ${tableEngine}, a plain table: the mode setting applies only to streams of the Stream engine (leave ENGINE out)`,
      );
    if (eventTime)
      bad(
        `Stream ${name} has ENGINE = ${tableEngine}, a plain table without _tp_time: the event_time_column setting applies only to streams of the Stream engine (leave ENGINE out)`,
      );
  }

  const columns: StreamColumn[] = [];
  const seen = new Set<string>();
  let declaredTime: StreamColumn | undefined;
  let declaredDelta = false;
  for (const c of spec.columns) {
    const colName = checkName('Column', c.name);
    if (seen.has(colName)) throw err('DUPLICATE_COLUMN', { name: colName });
    seen.add(colName);
    const column = columnFromSpec(c, translate);
    const type = column.type;
    const parsed = parseDataType(type);
    if (colName === TP_SN) {
      if (parsed.name !== 'int64')
        throw err('ILLEGAL_COLUMN', { detail: 'The type of _tp_sn column must be int64' });
      continue; // always present (hidden); declaring it changes nothing
    }
    if (colName.startsWith('_tp_') && colName !== TP_TIME && colName !== TP_DELTA) {
      throw err('ILLEGAL_COLUMN', {
        detail: `Column name ${colName} is reserved (names starting with _tp_)`,
      });
    }
    if (RESERVED_NAMES.has(colName) && !spec.windowColumnsAllowed)
      throw err('ILLEGAL_COLUMN', { detail: `Column name ${colName} is reserved` });
    if (colName === TP_TIME && parsed.name !== 'datetime64') {
      throw err('ILLEGAL_COLUMN', { detail: `The type of _tp_time column must be datetime64, got ${type}` });
    }
    if (colName === TP_DELTA) {
      if (parsed.name !== 'int8')
        throw err('ILLEGAL_COLUMN', { detail: `The type of _tp_delta column must be int8, got ${type}` });
      if (!isChangelogMode(mode) && !spec.deltaColumnAllowed) {
        throw err('ILLEGAL_COLUMN', {
          detail: 'Column _tp_delta is only allowed in changelog and changelog_kv streams',
        });
      }
      declaredDelta = true;
    }
    if (colName === TP_TIME) {
      if (column.alias) throw err('ILLEGAL_COLUMN', { detail: 'Column _tp_time cannot be an ALIAS column' });
      if (column.default && eventTime && column.default.proton !== eventTime.proton) {
        bad('Give either a DEFAULT for _tp_time or the event_time_column setting, not both');
      }
      declaredTime = column;
    }
    columns.push(column);
  }

  const timeDefault: SqlExpr = eventTime ?? { proton: NOW64_PROTON, engine: NOW64_PROTON };
  // A plain table (a table ENGINE) has the columns it declares, a `_tp_time` among them as written.
  if (declaredTime && !tableEngine) {
    if (!declaredTime.default) {
      const i = columns.indexOf(declaredTime);
      columns[i] = { ...declaredTime, default: timeDefault };
    }
  } else if (!tableEngine) {
    columns.push({
      name: TP_TIME,
      type: "datetime64(3, 'UTC')",
      engineType: "DateTime64(3, 'UTC')",
      default: timeDefault,
      codec: TP_TIME_CODEC,
      implicit: true,
    });
  }
  if (isChangelogMode(mode) && !declaredDelta) {
    columns.push({
      name: TP_DELTA,
      type: 'int8',
      engineType: 'Int8',
      default: { proton: '1', engine: '1' },
      implicit: true,
    });
  }

  const indexes: StreamIndex[] = [];
  if (!declaredTime && !tableEngine) {
    indexes.push({
      name: '_tp_time_index',
      expr: { proton: TP_TIME, engine: TP_TIME },
      type: 'minmax',
      granularity: 2,
    });
  }
  for (const ix of spec.indexes ?? []) {
    const e = expr(ix.expr);
    if (!e) bad(`Index ${ix.name} has no expression`);
    indexes.push({
      name: checkName('Index', ix.name),
      expr: e,
      type: ix.type.trim(),
      granularity: ix.granularity ?? 1,
    });
  }

  const primaryKey = expr(spec.primaryKey);
  if (isKvMode(mode) && !primaryKey) bad('Primary key is required for changelog kv or versioned kv stream');
  const keyColumns = primaryKey ? splitTopLevel(stripOuterParens(primaryKey.engine)) : [];

  // A plain table without `_tp_time` orders versions by `_tp_sn` (only kv modes use it).
  const givenVersion = spec.versionColumn ?? settingText(settings.version_column);
  const hasTime = columns.some((c) => c.name === TP_TIME);
  const versionColumn = givenVersion ?? (hasTime ? TP_TIME : TP_SN);
  const versionName = bareIdentifier(versionColumn) ?? versionColumn;
  if (givenVersion !== undefined && !columns.some((c) => c.name === versionName)) {
    throw err('UNKNOWN_IDENTIFIER', {
      name: versionName,
      hint: ' (the version_column setting names no column)',
    });
  }
  if (eventTime) {
    const bare = bareIdentifier(eventTime.proton);
    if (bare !== undefined && !columns.some((c) => c.name === bare)) {
      throw err('UNKNOWN_IDENTIFIER', {
        name: bare,
        hint: ' (the event_time_column setting names no column)',
      });
    }
  }

  // Proton's defaults for the non-kv modes of the Stream engine; kv streams are ordered by their
  // key, plain tables (a table ENGINE) by what they declare (else `tuple()`).
  let orderBy = expr(spec.orderBy) ?? primaryKey;
  let partitionBy = expr(spec.partitionBy);
  if (!isKvMode(mode) && !tableEngine) {
    orderBy ??= { proton: 'to_start_of_hour(_tp_time)', engine: 'toStartOfHour(_tp_time)' };
    partitionBy ??= { proton: 'to_YYYYMMDD(_tp_time)', engine: 'toYYYYMMDD(_tp_time)' };
  }

  const retentionBytes =
    spec.logstoreRetentionBytes ??
    settingInt('logstore_retention_bytes', settings.logstore_retention_bytes) ??
    DEFAULT_RETENTION_BYTES;
  const retentionMs =
    spec.logstoreRetentionMs ??
    settingInt('logstore_retention_ms', settings.logstore_retention_ms) ??
    DEFAULT_RETENTION_MS;
  const shards = spec.shards ?? settingInt('shards', settings.shards) ?? 1;
  const replicationFactor =
    spec.replicationFactor ?? settingInt('replicas', settings.replicas ?? settings.replication_factor) ?? 1;
  if (shards < 1) bad('Setting shards must be at least 1');
  if (replicationFactor < 1) bad('Setting replicas must be at least 1');

  const passive: Record<string, string> = {};
  for (const [k, v] of Object.entries(settings)) {
    if (PASSIVE_SETTINGS.has(k)) passive[k] = settingText(v) ?? '';
    else if (STREAM_STORAGE_SETTINGS.has(k)) passive[k] = storageSettingValue(k, v);
    else if (STREAM_TYPE_CHECKS.has(k)) passive[k] = typeCheckValue(k, v);
  }

  const base: Omit<StreamDefinition, 'createQuery'> = {
    db,
    name,
    columns,
    indexes,
    mode,
    ...(primaryKey ? { primaryKey } : {}),
    keyColumns,
    orderBy: orderBy ?? { proton: 'tuple()', engine: 'tuple()' },
    ...(partitionBy ? { partitionBy } : {}),
    ...(expr(spec.ttl) ? { ttl: expr(spec.ttl) } : {}),
    ...(eventTime ? { eventTimeColumn: eventTime } : {}),
    versionColumn: versionName,
    storageType,
    logstoreRetentionBytes: retentionBytes,
    logstoreRetentionMs: retentionMs,
    shards,
    ...(shards > 1 ? { shardedStorage: true } : {}),
    replicationFactor,
    description: spec.description ?? '',
    ...(tableEngine ? { tableEngine } : {}),
    settings: passive,
    ...(spec.firstSn !== undefined ? { firstSn: spec.firstSn } : {}),
  };
  return withCreateQuery(base);
}

/** Re-print `createQuery` after a change to a definition. */
export function withCreateQuery(def: Omit<StreamDefinition, 'createQuery'>): StreamDefinition {
  return { ...def, createQuery: printCreateQuery(def) };
}
