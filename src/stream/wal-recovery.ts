import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString, withSettings } from '../engine/settings-clause.ts';
import type { Logger } from '../log/logger.ts';
import { columnMapping, schemaAt } from './alter-columns.ts';
import { type StreamDefinition, TP_SHARD, TP_SN } from './stream-definition.ts';
import {
  columnDdl,
  historyTable,
  ingestComment,
  insertSettings,
  qualify,
  readTable,
  SHARD_EXPR,
  SN_EXPR,
} from './stream-tables.ts';
import { withTypeChecks } from './table-check-settings.ts';
import type { WalRecord, WalRecordHeader } from './wal-record.ts';
import type { WriteAheadLog } from './write-ahead-log.ts';

/** Inclusive sequence-number ranges present in a table. */
type Island = readonly [number, number];

export interface RecoveryResult {
  /** Records (fully or partly) replayed into the engine. */
  records: number;
  rows: number;
  /** Largest `_tp_sn` in the engine after recovery (-1 when none). */
  maxSn: number;
}

/** The table WAL records are replayed into: the MergeTree (hybrid) or the Memory table (streaming). */
export function replayTarget(def: StreamDefinition): string {
  return historyTable(def) ?? readTable(def);
}

async function rows<T>(engine: Engine, sql: string): Promise<T[]> {
  const text = (await engine.query(sql, { format: 'JSONCompactEachRow' })).text();
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as T);
}

/** The largest `_tp_sn` in a table, -1 when it has no rows. */
export async function maxSn(engine: Engine, table: string): Promise<number> {
  const [r] = await rows<[string, string]>(engine, `SELECT count(), max(${quoteIdent(TP_SN)}) FROM ${table}`);
  return r && Number(r[0]) > 0 ? Number(r[1]) : -1;
}

/** Which sequence numbers at or after `from` the table holds, as contiguous islands. */
async function presentIslands(engine: Engine, table: string, from: number): Promise<Island[]> {
  const sn = quoteIdent(TP_SN);
  const [stats] = await rows<[string, string, string, string]>(
    engine,
    `SELECT count(), uniqExact(${sn}), min(${sn}), max(${sn}) FROM ${table} WHERE ${sn} >= ${from}`,
  );
  const [count, uniq, min, max] = (stats ?? ['0', '0', '0', '0']).map(Number) as [
    number,
    number,
    number,
    number,
  ];
  if (count === 0) return [];
  if (uniq === count && max - min + 1 === count) return [[min, max]];
  const islands = await rows<[string, string]>(
    engine,
    `SELECT min(s), max(s) FROM (SELECT s, s - row_number() OVER (ORDER BY s) AS g FROM (SELECT DISTINCT ${sn} AS s FROM ${table} WHERE ${sn} >= ${from})) GROUP BY g ORDER BY 1`,
  );
  return islands.map(([a, b]) => [Number(a), Number(b)] as const);
}

function covered(islands: Island[], a: number, b: number): { all: boolean; none: boolean; ranges: Island[] } {
  const ranges: Island[] = [];
  let n = 0;
  for (const [x, y] of islands) {
    const lo = Math.max(a, x);
    const hi = Math.min(b, y);
    if (lo <= hi) {
      ranges.push([lo, hi]);
      n += hi - lo + 1;
    }
  }
  return { all: n === b - a + 1, none: n === 0, ranges };
}

/** `INSERT INTO t (cols) SETTINGS log_comment = ... FORMAT f` + the payload, as one statement. */
export function inlineInsertSql(table: string, header: WalRecordHeader, payload: Buffer): string {
  const cols = header.columns ? ` (${header.columns.map(quoteIdent).join(', ')})` : '';
  const comment = quoteString(ingestComment(header.first, header.time, header.shard));
  const pinned = Object.entries(insertSettings(payload.length))
    .map(([k, v]) => `, ${k} = ${typeof v === 'number' ? v : quoteString(v)}`)
    .join('');
  return `INSERT INTO ${table}${cols} SETTINGS log_comment = ${comment}${pinned} FORMAT ${header.format}\n${payload.toString('utf8')}`;
}

/**
 * Replay a record through a scratch Memory table: only the rows not `present` in the target (a
 * record partly flushed), and/or with the columns the record was written with when an ALTER STREAM
 * postdates it (README.md, "ALTER STREAM"): a dropped column's values are left behind, a renamed
 * one lands under its new name, a modified one is CAST to its new type (as the ALTER converted the
 * rows already stored), and a column added later takes its DEFAULT.
 */
async function replayThroughScratch(
  engine: Engine,
  def: StreamDefinition,
  target: string,
  record: WalRecord,
  present: Island[],
): Promise<void> {
  const old = schemaAt(def, record.header.first);
  const scratch = qualify(def.db, `.tp_replay.${def.name}`);
  await engine.query(`DROP TABLE IF EXISTS ${scratch}`);
  if (old) {
    const cols = [
      ...old.columns.map((c) => columnDdl(c, false)),
      `${quoteIdent(TP_SN)} Int64 MATERIALIZED ${SN_EXPR}`,
      ...(def.shardedStorage ? [`${quoteIdent(TP_SHARD)} Int32 MATERIALIZED ${SHARD_EXPR}`] : []),
    ];
    await engine.query(
      withTypeChecks(`CREATE TABLE ${scratch} (\n  ${cols.join(',\n  ')}\n) ENGINE = Memory`, def.settings),
    );
  } else {
    await engine.query(withTypeChecks(`CREATE TABLE ${scratch} AS ${target} ENGINE = Memory`, def.settings));
  }
  try {
    await engine.query(inlineInsertSql(scratch, record.header, record.payload));
    const { names, exprs } = columnMapping(def, old);
    const keep = present.map(([a, b]) => `${quoteIdent(TP_SN)} BETWEEN ${a} AND ${b}`).join(' OR ');
    const where = keep ? ` WHERE NOT (${keep})` : '';
    await engine.query(
      withSettings(
        `INSERT INTO ${target} (${names.join(', ')}) SELECT ${exprs.join(', ')} FROM ${scratch}${where}`,
        {
          insert_allow_materialized_columns: 1,
        },
      ),
    );
  } finally {
    await engine.query(`DROP TABLE IF EXISTS ${scratch}`);
  }
}

/**
 * Bring the engine up to the WAL after a start: every WAL record whose sequence numbers are not in
 * the target table is inserted again (with the same `log_comment`, so the same `_tp_sn` and
 * `_tp_time`); records already there are skipped, partly present ones replay only their missing
 * rows. Run before the stream accepts writes or serves reads: every acknowledged row is then
 * present exactly once.
 */
export async function recoverFromWal(
  engine: Engine,
  def: StreamDefinition,
  wal: WriteAheadLog,
  logger?: Logger,
): Promise<RecoveryResult> {
  const target = replayTarget(def);
  const from = wal.firstSn;
  const islands = await presentIslands(engine, target, from);
  const result: RecoveryResult = { records: 0, rows: 0, maxSn: -1 };
  for await (const record of wal.recordsFrom(from)) {
    const a = record.header.first;
    const b = a + record.header.count - 1;
    const c = covered(islands, a, b);
    if (c.all) continue;
    try {
      if (c.none && !schemaAt(def, a))
        await engine.query(inlineInsertSql(target, record.header, record.payload));
      else await replayThroughScratch(engine, def, target, record, c.ranges);
      result.records++;
      result.rows += record.header.count - (c.none ? 0 : c.ranges.reduce((n, [x, y]) => n + y - x + 1, 0));
    } catch (e) {
      logger?.error(
        { err: e, stream: `${def.db}.${def.name}`, first: a, count: record.header.count },
        'WAL record could not be replayed; skipped',
      );
    }
  }
  result.maxSn = await maxSn(engine, target);
  return result;
}
