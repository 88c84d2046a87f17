import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { type StreamDefinition, TP_SN } from './stream-definition.ts';
import { historyTable, readTable } from './stream-tables.ts';
import type { SegmentSummary } from './wal-segment.ts';
import type { WriteAheadLog } from './write-ahead-log.ts';

/**
 * The largest sequence number the historical store holds. The one-layer Buffer flushes everything it
 * holds, in sequence order (group commits are capped below its limits, so no insert bypasses it),
 * so every row up to this number has reached the MergeTree — even if TTL has deleted some since.
 */
async function durableThrough(engine: Engine, table: string): Promise<number> {
  const text = (
    await engine.query(`SELECT count(), max(${quoteIdent(TP_SN)}) FROM ${table}`, { format: 'TSV' })
  ).text();
  const [count, max] = text.trim().split('\t').map(Number);
  return count ? (max as number) : -1;
}

/**
 * Delete the WAL segments retention no longer asks to keep: sealed segments, oldest first, while the
 * log is over `logstore_retention_bytes` or the segment's newest record is older than
 * `logstore_retention_ms` (non-positive: unlimited). A hybrid stream's segment goes only once the
 * Buffer has flushed all its rows into the MergeTree. A streaming stream's Memory table
 * forgets the rows of deleted segments. Answers the first sequence number still in the WAL.
 */
export async function applyRetention(
  engine: Engine,
  def: StreamDefinition,
  wal: WriteAheadLog,
  now = Date.now(),
  /** Called before each segment is deleted (the stream keeps its producer marks elsewhere then). */
  beforeDrop?: (segment: SegmentSummary) => Promise<void>,
): Promise<number> {
  const retentionMs = def.logstoreRetentionMs;
  const retentionBytes = def.logstoreRetentionBytes;
  if (retentionMs <= 0 && retentionBytes <= 0) return wal.firstSn;
  if (retentionMs > 0) {
    const active = wal.summaries().at(-1);
    if (active && active.records > 0 && now - active.lastTime > retentionMs) await wal.maybeRotate(now, true);
  }
  const history = historyTable(def);
  let flushed: number | undefined;
  let dropped = false;
  for (;;) {
    const oldest = wal.sealedSegments()[0];
    if (!oldest) break;
    const expired = retentionMs > 0 && now - oldest.lastTime > retentionMs;
    const oversized = retentionBytes > 0 && wal.bytes > retentionBytes;
    if (!expired && !oversized) break;
    if (history && oldest.records > 0) {
      flushed ??= await durableThrough(engine, history);
      if (flushed < oldest.next - 1) break;
    }
    await beforeDrop?.(oldest);
    await wal.dropOldest();
    dropped = true;
  }
  if (dropped && !history) {
    await engine.query(
      `ALTER TABLE ${readTable(def)} DELETE WHERE ${quoteIdent(TP_SN)} < ${wal.firstSn} SETTINGS mutations_sync = 1`,
    );
  }
  return wal.firstSn;
}
