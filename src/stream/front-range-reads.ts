import { type StreamDefinition, streamKey } from './stream-definition.ts';
import { readTable, writeTable } from './stream-tables.ts';

/**
 * Range reads that skip the MergeTree (issue 12). A hybrid stream's rows are in its front (a
 * Buffer) from some sequence number on and in its MergeTree before it; a read through the Merge
 * table plans both, and planning the MergeTree read is most of a small step's cost (~2 of ~3.5 ms
 * of CPU). A streaming step reads `_tp_sn > lo AND _tp_sn <= hi`: when `lo` is at or after the
 * front's first row, the front alone holds the range.
 *
 * The step SQL carries a marker before the Merge table, `/*tp_range:<hex key>:<lo>*\/db.name`,
 * which `resolveFrontRanges` turns into the front table while the stream's flush lock is held (so
 * no move runs between the decision and the read). An unresolved marker is a comment: the read
 * goes through the Merge table, which is always right.
 */

const MARK = '/*tp_range:';
const MARKED = /\/\*tp_range:([0-9a-f]+):(-?\d+)\*\//g;

function hexKey(key: string): string {
  return Buffer.from(key, 'utf8').toString('hex');
}

/**
 * `FROM` text for a read of `def`'s rows in `(lo, hi]`, `lo` an engine expression that is a
 * number once the step is filled (a placeholder such as `__TRB_LO_0__`). Streams without a front
 * answer their table.
 */
export function markedRangeTable(def: StreamDefinition, lo: string): string {
  if (def.storageType !== 'hybrid') return readTable(def);
  return `${MARK}${hexKey(streamKey(def.db, def.name))}:${lo}*/${readTable(def)}`;
}

/** What the resolver needs of a stream: its tables and the first sequence number its front may hold. */
export interface FrontState {
  readTable: string;
  writeTable: string;
  /** Rows with a smaller `_tp_sn` are in the MergeTree, the others in the front. */
  frontFromSn: number;
}

/**
 * `sql` with every marked range read whose rows are all in the front reading the front alone.
 * Call it only while the flush locks of the streams it reads are held.
 */
export function resolveFrontRanges(sql: string, frontOf: (key: string) => FrontState | undefined): string {
  if (!sql.includes(MARK)) return sql;
  let out = '';
  let last = 0;
  for (const m of sql.matchAll(MARKED)) {
    const at = m.index as number;
    const after = at + m[0].length;
    const state = frontOf(Buffer.from(m[1] as string, 'hex').toString('utf8'));
    out += sql.slice(last, at);
    last = after;
    if (state && sql.startsWith(state.readTable, after) && Number(m[2]) + 1 >= state.frontFromSn) {
      out += state.writeTable;
      last = after + state.readTable.length;
    }
  }
  return out + sql.slice(last);
}

export function frontState(def: StreamDefinition, frontFromSn: number): FrontState {
  return { readTable: readTable(def), writeTable: writeTable(def), frontFromSn };
}
