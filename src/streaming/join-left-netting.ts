import { quoteIdent } from '../engine/settings-clause.ts';
import { P, SqlTemplate } from './sql-template.ts';

/**
 * A LEFT JOIN of changelog inputs (join-program.ts ChangelogJoin.leftJoin). Its step SQL `T`
 * selects, after the query's columns, each row's sign as LEFT_JOIN_SIGN (the product of the sides'
 * `_tp_delta`, the left side's alone for a row of defaults). The rows a part sends are netted: rows
 * equal in every column but the signs are summed, those summing to zero dropped, the others sent
 * as many times as their sum, retractions first, with the query's `_tp_delta` the sum's sign.
 *
 * - `tail`: T netted (a left side's change, the right side as of the step's start);
 * - `netted`: T with a LEFT JOIN's right side as of the step's end, less T with it as of the
 *   step's start (`__TRB_AT2_r__`), both over the other sides' states: what a right side's change
 *   does to the LEFT JOIN, a defaults row retracted when a right row comes to match it.
 */
export const LEFT_JOIN_SIGN = '__trb_sign';

export const at2 = (i: number) => `__TRB_AT2_${i}__`;

export function leftJoinTemplates(
  t: string,
  columns: readonly string[],
  sides: readonly number[],
  deltaColumn: string | undefined,
  restrict?: { readonly from: string; readonly to: string },
): { tail: SqlTemplate; netted: SqlTemplate } {
  const kept = columns.filter((c) => c !== LEFT_JOIN_SIGN);
  const keys = kept.filter((c) => c !== deltaColumn).map(quoteIdent);
  const out = kept.map((c) =>
    c === deltaColumn ? `toInt8(sign(__trb_n)) AS ${quoteIdent(c)}` : quoteIdent(c),
  );
  const sign = quoteIdent(LEFT_JOIN_SIGN);
  const net = (rows: string) => {
    const grouped = `SELECT ${[...keys, `sum(${sign}) AS __trb_n`].join(', ')} FROM (${rows}) GROUP BY ${keys.length ? keys.join(', ') : 'tuple()'} HAVING __trb_n != 0`;
    return `SELECT ${out.join(', ')} FROM (${grouped}) ARRAY JOIN range(toUInt64(abs(__trb_n))) AS __trb_copy ORDER BY __trb_n`;
  };
  // Every side's state read as of `__TRB_AT2_i__` (a part sets it to the step's start for the side
  // whose change it is, to `__TRB_AT_i__` for the others).
  // `restrict`: a side's read, and the same read of only the rows the change can alter (the same
  // rows in both terms, so the difference is unchanged).
  const part = restrict ? t.replaceAll(restrict.from, restrict.to) : t;
  const earlier = sides.reduce((sql, i) => sql.replaceAll(P.at(i), at2(i)), part);
  const difference = `SELECT ${[...keys, sign].join(', ')} FROM (${part}) UNION ALL SELECT ${[...keys, `-${sign}`].join(', ')} FROM (${earlier})`;
  return {
    tail: new SqlTemplate(net(`SELECT ${[...keys, sign].join(', ')} FROM (${t})`)),
    netted: new SqlTemplate(net(difference)),
  };
}
