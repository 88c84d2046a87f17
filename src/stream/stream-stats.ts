import type { Engine } from '../engine/engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { hasEventTime, type StreamDefinition, TP_SN, TP_TIME } from './stream-definition.ts';
import { historyTable, historyTableName, readTable } from './stream-tables.ts';

/** Sizes shown by the stream list with `expand` and by the stats route. */
export interface StreamSizes {
  rowCount: number;
  /** Bytes of the historical store (MergeTree parts on disk; the Memory table for streaming/memory). */
  historicalBytes: number;
  /** Bytes of the WAL segments on disk. */
  streamingBytes: number;
}

export interface StreamStatistics extends StreamSizes {
  /** Earliest and latest `_tp_time`, ISO 8601 (absent for an empty stream). */
  earliestEvent?: string;
  latestEvent?: string;
  /** Last sequence number durable in the historical store (hybrid) or readable (others); -1: none. */
  appliedSn: number;
  /** Last sequence number committed (in the WAL and readable); -1: none. */
  committedSn: number;
  /** Time of the last commit, epoch ms (0: none since start). */
  lastCommitAt: number;
}

async function firstRow(engine: Engine, sql: string): Promise<unknown[]> {
  const text = (await engine.query(sql, { format: 'JSONCompactEachRow' })).text();
  const line = text.split('\n').find((l) => l.length > 0);
  return line ? (JSON.parse(line) as unknown[]) : [];
}

async function storedBytes(engine: Engine, def: StreamDefinition): Promise<number> {
  if (historyTable(def)) {
    const [b] = await firstRow(
      engine,
      `SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = ${quoteString(def.db)} AND table = ${quoteString(historyTableName(def.name))}`,
    );
    return Number(b ?? 0);
  }
  const [b] = await firstRow(
    engine,
    `SELECT total_bytes FROM system.tables WHERE database = ${quoteString(def.db)} AND name = ${quoteString(def.name)}`,
  );
  return Number(b ?? 0);
}

export async function streamSizes(
  engine: Engine,
  def: StreamDefinition,
  walBytes: number,
): Promise<StreamSizes> {
  const [[count], historicalBytes] = await Promise.all([
    firstRow(engine, `SELECT count() FROM ${readTable(def)}`),
    storedBytes(engine, def),
  ]);
  return { rowCount: Number(count ?? 0), historicalBytes, streamingBytes: walBytes };
}

function iso(ms: unknown): string | undefined {
  if (ms === null || ms === undefined) return undefined;
  return new Date(Number(ms)).toISOString();
}

export async function streamStatistics(
  engine: Engine,
  def: StreamDefinition,
  wal: { bytes: number; committedSn: number; lastCommitAt: number },
): Promise<StreamStatistics> {
  const time = quoteIdent(TP_TIME);
  const sn = quoteIdent(TP_SN);
  const history = historyTable(def);
  // A plain table (a stream with a table ENGINE) may have no event time: no earliest/latest event.
  const span = hasEventTime(def)
    ? `toUnixTimestamp64Milli(min(${time})), toUnixTimestamp64Milli(max(${time}))`
    : 'NULL, NULL';
  const [sizes, [count, earliest, latest], applied] = await Promise.all([
    streamSizes(engine, def, wal.bytes),
    firstRow(engine, `SELECT count(), ${span} FROM ${readTable(def)}`),
    history ? firstRow(engine, `SELECT count(), max(${sn}) FROM ${history}`) : Promise.resolve(undefined),
  ]);
  const empty = Number(count ?? 0) === 0;
  const appliedSn = applied ? (Number(applied[0] ?? 0) > 0 ? Number(applied[1]) : -1) : wal.committedSn;
  return {
    ...sizes,
    ...(empty ? {} : { earliestEvent: iso(earliest), latestEvent: iso(latest) }),
    appliedSn,
    committedSn: wal.committedSn,
    lastCommitAt: wal.lastCommitAt,
  };
}
