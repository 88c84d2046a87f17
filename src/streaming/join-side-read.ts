import { quoteIdent } from '../engine/settings-clause.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import { latestRowsIn, netRowsUpTo, rangeSource } from '../stream/stream-reads.ts';
import { P } from './sql-template.ts';

/**
 * How a side of a join of changelog inputs holds its state (join-program.ts ChangelogJoin):
 * `kv`, the latest row per key (versioned_kv, changelog_kv, `changelog(s, key...)`), a change
 * retracting the key's previous row; `rows`, a changelog stream's net multiset of rows, each row
 * carrying its own `_tp_delta`.
 */
export type JoinSideKind = 'kv' | 'rows';

/**
 * The read of one side of a join of changelog inputs, filled per part (join-inputs.ts). Its
 * columns are the stream's stored columns and `_tp_sn`, with `_tp_delta` the row's sign:
 * - `__TRB_ALL_i__` = 1: the side's state as of `_tp_sn <= __TRB_AT_i__`, every row +1 (the side
 *   a part reads whole);
 * - `__TRB_ALL_i__` = 0: what changed in `(__TRB_LO_i__, __TRB_HI_i__]` (the part's new rows):
 *   `kv`, the state as of `__TRB_AT_i__` of the keys changed in the range, each row signed
 *   `__TRB_SIGN_i__` (-1 as of lo, then +1 as of hi); `rows`, the range's rows with their own
 *   `_tp_delta`.
 * The state is read from the side's kept table (join-side-state.ts), brought up to the step's end
 * before the step runs: its rows with `_tp_sn <= __TRB_AT_i__`.
 */
export function joinSideSql(
  def: StreamDefinition,
  index: number,
  kind: JoinSideKind,
  kept: string,
  restrict?: string,
): string {
  const all = P.all(index);
  const lo = P.lo(index);
  const hi = P.hi(index);
  const at = P.at(index);
  const delta = quoteIdent('_tp_delta');
  if (kind === 'rows') {
    const changed = `SELECT *, _tp_sn FROM ${rangeSource(def, lo)} WHERE ${all} = 0 AND _tp_sn > ${lo} AND _tp_sn <= ${hi}`;
    const only = restrict ? ` AND (${restrict})` : '';
    const state = `SELECT * FROM ${netRowsUpTo(def, at, `(SELECT * FROM ${kept} WHERE ${all} = 1${only})`)}`;
    return `(SELECT * FROM (${changed} UNION ALL ${state}) ORDER BY _tp_sn)`;
  }
  const keys = def.keyColumns.join(', ');
  const changedKeys = `SELECT ${keys} FROM ${rangeSource(def, lo)} WHERE _tp_sn > ${lo} AND _tp_sn <= ${hi}`;
  // The stored columns in their order (as `SELECT *` of the stream), `_tp_delta` the part's sign
  // (streams of the kv modes other than changelog_kv do not store it), then `_tp_sn`.
  const sign = `toInt8(${P.sign(index)}) AS ${delta}`;
  const stored = def.columns.filter((c) => !c.alias).map((c) => c.name);
  const columns = [
    ...stored.map((c) => (c === '_tp_delta' ? sign : quoteIdent(c))),
    ...(stored.includes('_tp_delta') ? [] : [sign]),
    '_tp_sn',
  ];
  // Only the keys the part needs, filtered before the latest row per key is taken (with
  // `restrict`, the keys any of whose rows it holds for).
  const only = restrict ? ` AND (${keys}) IN (SELECT ${keys} FROM ${kept} WHERE ${restrict})` : '';
  const rows = `(SELECT * FROM ${kept} WHERE _tp_sn <= ${at} AND (${all} = 1 OR (${keys}) IN (${changedKeys}))${only})`;
  return `(SELECT ${columns.join(', ')} FROM ${latestRowsIn(def, rows)})`;
}

/**
 * The values of `columns` among what changed on side `index` in `(__TRB_LO_i__, __TRB_HI_i__]`
 * (joinSideSql with `__TRB_ALL_i__` = 0): a kv side's changed keys as of lo and as of hi, a
 * changelog side's rows of the range. A LEFT JOIN's right-side change can only alter the joined
 * rows of left rows whose join key is one of these (join-left-netting.ts).
 */
export function touchedValuesSql(
  def: StreamDefinition,
  index: number,
  kind: JoinSideKind,
  kept: string,
  columns: readonly string[],
): string {
  const changed = joinSideSql(def, index, kind, kept).replaceAll(P.all(index), '0');
  const list = columns.map(quoteIdent).join(', ');
  const at = (sn: string) => `SELECT ${list} FROM ${changed.replaceAll(P.at(index), sn)}`;
  return kind === 'rows' ? at(P.hi(index)) : `${at(P.lo(index))} UNION ALL ${at(P.hi(index))}`;
}
