/**
 * The changelog of a keyed input over a step's range, as Proton's ChangelogConvertTransform makes
 * it (streaming-sql-notes.md §1.2, §1.11): the input's rows are versions of their key; a new
 * version retracts the previous one. Used for `changelog(s, key...)` and for aggregations over a
 * `versioned_kv` stream.
 *
 * Over the range `(lo, hi]`, for every key with rows in it: `+1` for the key's winning row (its
 * last row by `_tp_sn`, or with a version column its largest `(version, _tp_sn)`, so a row with an
 * older version is late and dropped), when that row is in the range; and `-1` for the key's
 * winning row among `(start, lo]`, the version in force before the range, when there is one.
 * Several versions of a key within one range give one retraction and one new row, as Proton's
 * transform does per block. Only rows after `start` count: the conversion starts with the query
 * (Proton's hash table starts empty), except for a versioned_kv aggregation, which starts from the
 * stream's whole history (start -1).
 */
export interface ChangelogConversion {
  /** A table (or parenthesised subquery) with the rows and `_tp_sn`. */
  readonly from: string;
  /** Key expressions (engine SQL). */
  readonly keys: readonly string[];
  /** Version column (engine SQL): with it, a row older than its key's current version is dropped. */
  readonly version?: string;
}

/** The placeholders a conversion is filled with: the range `(lo, hi]` and the start. */
export interface ChangelogRange {
  readonly lo: string;
  readonly hi: string;
  readonly start: string;
}

/**
 * SQL of the changelog rows of `(lo, hi]`: the input's columns (`*`), `_tp_sn` and `_tp_delta`
 * (Int8), retractions first, then by sequence number (the order a tail emits them in).
 */
export function changelogRowsSql(c: ChangelogConversion, r: ChangelogRange): string {
  const k = c.keys.join(', ');
  // Keys named positionally inside subqueries (a key may be an expression).
  const named = c.keys.map((key, i) => `${key} AS __ck${i}`).join(', ');
  const names = c.keys.map((_, i) => `__ck${i}`).join(', ');
  const sn = '_tp_sn';
  const inRange = `${sn} > ${r.lo} AND ${sn} <= ${r.hi}`;
  // The winning row of each key with rows in the range, when the winner is in the range.
  const winners = c.version
    ? `SELECT ${names}, __w FROM (SELECT ${named}, argMax(${sn}, (${c.version}, ${sn})) AS __w FROM ${c.from} WHERE ${sn} > ${r.start} AND ${sn} <= ${r.hi} AND (${k}) IN (SELECT ${k} FROM ${c.from} WHERE ${inRange}) GROUP BY ${names}) WHERE __w > ${r.lo}`
    : `SELECT ${named}, max(${sn}) AS __w FROM ${c.from} WHERE ${inRange} GROUP BY ${names}`;
  const order = c.version ? `(${c.version}, ${sn})` : sn;
  const previous = `SELECT ${named}, argMax(${sn}, ${order}) FROM ${c.from} WHERE ${sn} > ${r.start} AND ${sn} <= ${r.lo} AND (${k}) IN (SELECT ${names} FROM (${winners})) GROUP BY ${names}`;
  const retractions = `SELECT *, ${sn}, toInt8(-1) AS _tp_delta FROM ${c.from} WHERE ${sn} > ${r.start} AND ${sn} <= ${r.lo} AND (${k}, ${sn}) IN (${previous})`;
  const additions = `SELECT *, ${sn}, toInt8(1) AS _tp_delta FROM ${c.from} WHERE ${inRange} AND (${k}, ${sn}) IN (${winners})`;
  return `(SELECT * FROM (${retractions} UNION ALL ${additions}) ORDER BY _tp_delta, ${sn})`;
}
