import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { Expr } from '../sql/ast/expression.ts';
import { rangeSource } from '../stream/stream-reads.ts';
import type { Alignment } from './join-alignment.ts';
import type { ChangelogJoin } from './join-program.ts';
import { P, SqlTemplate } from './sql-template.ts';
import type { StreamSource } from './stream-bindings.ts';

/**
 * The alignment of a join of two changelog inputs (join-changelog-alignment.ts): which column of
 * each side `lag_behind(offset, t1, t2)` names (each a column of one side, in either order, as
 * in `lag_behind(1ms, r2.time, r1.time)`), and the SQL of each side's rows' sequence numbers and
 * times in a range.
 */
export function changelogAlignment(
  a: Alignment,
  sides: readonly StreamSource[],
  aliases: readonly string[],
): NonNullable<ChangelogJoin['align']> {
  const owner = (e: Expr): { side: 0 | 1; column: string } => {
    if (e.kind === 'Identifier' && e.parts.length <= 2) {
      const column = e.parts.at(-1) as string;
      const has = (k: 0 | 1) => (sides[k]?.definition.columns ?? []).some((c) => c.name === column);
      if (e.parts.length === 2) {
        const k = aliases.indexOf(e.parts[0] as string);
        if ((k === 0 || k === 1) && has(k)) return { side: k, column };
      } else if (has(0) !== has(1)) return { side: has(0) ? 0 : 1, column };
    }
    throw err('NOT_IMPLEMENTED', {
      detail:
        'lag_behind(offset, t1, t2) in a join of changelog inputs takes a time column of each side (lag_behind(1ms, a._tp_time, b._tp_time))',
    });
  };
  const first = owner(a.left);
  const second = owner(a.right);
  if (first.side === second.side)
    throw err('NOT_IMPLEMENTED', {
      detail: 'lag_behind(offset, t1, t2) in a join of changelog inputs takes one time column of each side',
    });
  const columns = first.side === 0 ? [first.column, second.column] : [second.column, first.column];
  const times = ([0, 1] as const).map((k) => {
    const s = sides[k] as StreamSource;
    const t = `toString(toUnixTimestamp64Nano(toDateTime64(${quoteIdent(columns[k] as string)}, 9)))`;
    return new SqlTemplate(
      `SELECT _tp_sn, ${t} FROM ${rangeSource(s.definition, P.lo(s.index))} WHERE _tp_sn > ${P.lo(s.index)} AND _tp_sn <= ${P.hi(s.index)} ORDER BY _tp_sn`,
    );
  }) as [SqlTemplate, SqlTemplate];
  return { times, lagNs: a.lagNs };
}
