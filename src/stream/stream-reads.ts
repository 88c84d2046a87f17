import { quoteIdent } from '../engine/settings-clause.ts';
import { markedRangeTable } from './front-range-reads.ts';
import { type StreamDefinition, TP_DELTA, TP_SN, TP_TIME } from './stream-definition.ts';
import { readTable } from './stream-tables.ts';

/**
 * Read SQL for the SQL layer (engine dialect). Every read goes through the front table, which sees
 * both unflushed and flushed rows.
 *
 * Columns of the results: the stream's stored columns (`SELECT *` of the front table excludes `_tp_sn`
 * and ALIAS columns, as Proton does); `_tp_sn` and ALIAS columns are readable by name. The
 * latest-per-key subquery of the kv modes lists every column explicitly, `_tp_sn` included, so a
 * `*` over it must be expanded by the SQL layer (use `visibleColumns(def)`).
 */

/** All rows ever written (the append-only history), whatever the mode. */
export function storedRowsSource(def: StreamDefinition): string {
  return readTable(def);
}

/**
 * The stream's rows as a historical query (`table(s)`) sees them: all rows for append and changelog
 * streams; the latest row per primary key for versioned_kv (largest `version_column`, then largest
 * `_tp_sn`) and changelog_kv (likewise, keys whose latest `_tp_delta` is -1 dropped).
 * Answers a table name or a parenthesised subquery, usable after FROM (add an alias if needed).
 */
export function historicalSource(def: StreamDefinition): string {
  if (def.mode === 'append' || def.mode === 'changelog') return readTable(def);
  return latestPerKeySource(def);
}

/**
 * The latest row per primary key among the rows with `_tp_sn <= maxSn` (an SQL expression, e.g. a
 * streaming step's placeholder): a kv stream as it was at that point of its history.
 */
export function latestRowsUpTo(def: StreamDefinition, maxSn: string): string {
  return latestPerKeySource(def, `${quoteIdent(TP_SN)} <= ${maxSn}`);
}

/**
 * The latest row per primary key among the rows with `afterSn < _tp_sn <= maxSn` (SQL expressions):
 * a kv stream (or `changelog(s, key)`, which starts with its query) as it was at `maxSn`.
 */
export function latestRowsBetween(def: StreamDefinition, afterSn: string, maxSn: string): string {
  const sn = quoteIdent(TP_SN);
  return latestPerKeySource(def, `${sn} > ${afterSn} AND ${sn} <= ${maxSn}`);
}

/**
 * A changelog stream as it was at `maxSn`: its net multiset of rows (each distinct row as many
 * times as the sum of its `_tp_delta`, when positive), with `_tp_delta` 1, the row's last
 * `_tp_time` and `_tp_sn`. The columns are the stored ones in order, then `_tp_sn`. `from`: where
 * the rows are read (a copy of some of them with the same columns; the stream by default).
 */
export function netRowsUpTo(def: StreamDefinition, maxSn: string, from = readTable(def)): string {
  const sn = quoteIdent(TP_SN);
  const stored = def.columns.filter((c) => !c.alias);
  const data = stored.filter((c) => c.name !== TP_TIME && c.name !== TP_DELTA).map((c) => quoteIdent(c.name));
  const time = quoteIdent(TP_TIME);
  const outer = stored.map((c) =>
    c.name === TP_TIME
      ? `__tp_t AS ${time}`
      : c.name === TP_DELTA
        ? `toInt8(1) AS ${quoteIdent(TP_DELTA)}`
        : quoteIdent(c.name),
  );
  const inner = `SELECT ${data.join(', ')}, argMax(${time}, ${sn}) AS __tp_t, max(${sn}) AS __tp_last, sum(${quoteIdent(TP_DELTA)}) AS __tp_n FROM ${from} WHERE ${sn} <= ${maxSn} GROUP BY ${data.join(', ')} HAVING __tp_n > 0`;
  return `(SELECT ${outer.join(', ')}, __tp_last AS ${sn} FROM (${inner}) ARRAY JOIN range(toUInt64(__tp_n)) AS __tp_copy)`;
}

/**
 * The last `versions` rows per primary key (by sequence number) among the rows with
 * `_tp_sn <= maxSn`: the right side of an ASOF join against a kv stream (Proton's keep_versions).
 */
export function lastVersionsUpTo(def: StreamDefinition, maxSn: string, versions: number): string {
  const sn = quoteIdent(TP_SN);
  return `(SELECT *, ${sn} FROM ${readTable(def)} WHERE ${sn} <= ${maxSn} ORDER BY ${sn} DESC LIMIT ${versions} BY ${def.keyColumns.join(', ')})`;
}

/**
 * The last `versions` rows per join key (by sequence number) among the rows with
 * `afterSn < _tp_sn <= maxSn`: the right side of an ASOF / LATEST join of two append streams.
 */
export function lastVersionsByKey(
  def: StreamDefinition,
  afterSn: string,
  maxSn: string,
  by: { readonly versions: number; readonly keys: readonly string[] },
): string {
  const sn = quoteIdent(TP_SN);
  return `(SELECT *, ${sn} FROM ${readTable(def)} WHERE ${sn} > ${afterSn} AND ${sn} <= ${maxSn} ORDER BY ${sn} DESC LIMIT ${by.versions} BY ${by.keys.map(quoteIdent).join(', ')})`;
}

/**
 * The stored columns of a kv stream plus `_tp_sn`, to keep a copy of some of its rows in an engine
 * table that `latestRowsIn` reads (e.g. a streaming join's right side).
 */
export function keptRowsSelect(def: StreamDefinition, where: string): string {
  const columns = [...def.columns.map((c) => quoteIdent(c.name)), quoteIdent(TP_SN)];
  return `SELECT ${columns.join(', ')} FROM ${readTable(def)} WHERE ${where}`;
}

/** The latest row per primary key among the rows kept in `table` (see `keptRowsSelect`). */
export function latestRowsIn(def: StreamDefinition, table: string): string {
  return latestPerKeySource(def, undefined, table);
}

/** The rows of `table` (see `keptRowsSelect`) that are the latest of their key (compaction). */
export function latestRowsOnly(def: StreamDefinition, table: string): string {
  const order =
    def.versionColumn === TP_SN
      ? `${quoteIdent(TP_SN)} DESC`
      : `${quoteIdent(def.versionColumn)} DESC, ${quoteIdent(TP_SN)} DESC`;
  return `SELECT * FROM ${table} ORDER BY ${order} LIMIT 1 BY ${def.keyColumns.join(', ')}`;
}

function latestPerKeySource(def: StreamDefinition, where?: string, from = readTable(def)): string {
  const keys = def.keyColumns;
  const keySet = new Set(keys.map((k) => k.trim()));
  // Carry every non-key column (ALIAS columns and _tp_sn too) through argMax in one tuple.
  const carried = [
    ...def.columns.filter((c) => !keySet.has(c.name) && !keySet.has(quoteIdent(c.name))).map((c) => c.name),
    TP_SN,
  ];
  const order =
    def.versionColumn === TP_SN
      ? quoteIdent(TP_SN)
      : `(${quoteIdent(def.versionColumn)}, ${quoteIdent(TP_SN)})`;
  const tuple = `tuple(${carried.map(quoteIdent).join(', ')})`;
  // In the stream's column order (`SELECT *` shows them so); key expressions that are not
  // columns first, `_tp_sn` last.
  const keyItems = new Map(keys.map((k, i) => [keyAlias(def, k, i), `${k} AS ${keyAlias(def, k, i)}`]));
  const carriedItems = new Map(
    carried.map((c, i) => [quoteIdent(c), `tupleElement(__tp_latest, ${i + 1}) AS ${quoteIdent(c)}`]),
  );
  const ordered = [...def.columns.map((c) => quoteIdent(c.name)), quoteIdent(TP_SN)];
  const outer = [
    ...[...keyItems].filter(([name]) => !ordered.includes(name)).map(([, item]) => item),
    ...ordered.flatMap((name) => {
      const item = keyItems.get(name) ?? carriedItems.get(name);
      return item ? [item] : [];
    }),
  ];
  const inner = `SELECT ${keys.join(', ')}, argMax(${tuple}, ${order}) AS __tp_latest FROM ${from}${where ? ` WHERE ${where}` : ''} GROUP BY ${keys.join(', ')}`;
  let sql = `SELECT ${outer.join(', ')} FROM (${inner})`;
  if (def.mode === 'changelog_kv') {
    const delta = carried.indexOf(TP_DELTA) + 1;
    sql += ` WHERE tupleElement(__tp_latest, ${delta}) != -1`;
  }
  return `(${sql})`;
}

/**
 * A changelog_kv stream as the bounded right side of a streaming join reads it (`s JOIN
 * table(changelog_kv)`): every stored row of a key that no later delete took back, where a delete
 * (`_tp_delta` -1) takes back the key's last row still standing, whatever its values (Proton's join
 * keeps each row of a key and a retraction pops the newest: 0013_changelogstream_join_table2 ids
 * 126, 134, table5 id 197). A row at running sum `s` of its key's deltas stands when no later
 * running sum falls below `s`. Same columns as `historicalSource`.
 */
export function joinRightRowsSource(def: StreamDefinition): string {
  if (def.mode !== 'changelog_kv') return historicalSource(def);
  const keys = def.keyColumns;
  const keySet = new Set(keys.map((k) => k.trim()));
  const carried = [
    ...def.columns.filter((c) => !keySet.has(c.name) && !keySet.has(quoteIdent(c.name))).map((c) => c.name),
    TP_SN,
  ];
  const sn = quoteIdent(TP_SN);
  const delta = quoteIdent(TP_DELTA);
  const by = keys.map((_k, i) => `__tp_k${i}`);
  const running = `sum(${delta}) OVER (PARTITION BY ${by.join(', ')} ORDER BY ${sn} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
  const inner = `SELECT ${[...keys.map((k, i) => `${k} AS __tp_k${i}`), ...carried.map(quoteIdent)].join(', ')}, ${running} AS __tp_s FROM ${readTable(def)}`;
  const suffixMin = `min(__tp_s) OVER (PARTITION BY ${by.join(', ')} ORDER BY ${sn} DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
  const marked = `SELECT *, ${suffixMin} AS __tp_m FROM (${inner})`;
  const outer = [...keys.map((k, i) => `__tp_k${i} AS ${keyAlias(def, k, i)}`), ...carried.map(quoteIdent)];
  return `(SELECT ${outer.join(', ')} FROM (${marked}) WHERE ${delta} = 1 AND __tp_m >= __tp_s)`;
}

/** A key expression keeps its column name when it is one; other expressions get a positional name. */
function keyAlias(def: StreamDefinition, key: string, i: number): string {
  const plain = key.replace(/^`|`$/g, '');
  return def.columns.some((c) => c.name === plain) ? quoteIdent(plain) : quoteIdent(`_tp_key_${i + 1}`);
}

/**
 * The table to read a committed sequence range from: `WHERE _tp_sn > a AND _tp_sn <= b`. Given
 * `lo` (the engine expression of `a`, e.g. a step's placeholder), the read is marked so that it
 * reads the stream's front alone when the range lies wholly there (front-range-reads.ts).
 */
export function rangeSource(def: StreamDefinition, lo?: string): string {
  return lo === undefined ? readTable(def) : markedRangeTable(def, lo);
}

/** `SELECT <columns> FROM <range source> WHERE _tp_sn > afterSn AND _tp_sn <= toSn`. */
export function rangeSelect(def: StreamDefinition, afterSn: number, toSn: number, columns = '*'): string {
  return `SELECT ${columns} FROM ${rangeSource(def)} WHERE ${quoteIdent(TP_SN)} > ${afterSn} AND ${quoteIdent(TP_SN)} <= ${toSn}`;
}

/** The name of the event-time column of every stream. */
export const EVENT_TIME_COLUMN = TP_TIME;
