import { quoteIdent } from '../engine/settings-clause.ts';
import { conjuncts } from '../sql/analyzer/query-facts.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { StreamDefinition } from '../stream/stream-definition.ts';
import { type JoinSideKind, joinSideSql, touchedValuesSql } from './join-side-read.ts';

/**
 * Which left rows a change of a LEFT JOIN's right side can alter (join-program.ts
 * ChangelogJoin.leftJoin.touch): the ON's equalities between a stored column of the right side
 * (`by`) and a stored column of one earlier side (`side`), e.g. `a.k = b.kk`. A right row changed in
 * a step (as of its start or its end) has some values of `byColumns`; only rows of `side` with the
 * same values in `columns` can join it, so a netted part reads only those (join-side-read.ts). The
 * earlier side must not be LEFT-attached itself: leaving out one of its rows must take out exactly
 * that row's joined rows, which holds only for a side every row of which is kept (the first side,
 * or one joined INNER). Undefined when the ON has no such equality.
 */
export interface LeftJoinTouch {
  readonly side: number;
  readonly columns: readonly string[];
  readonly by: number;
  readonly byColumns: readonly string[];
}

export function leftJoinTouch(
  on: Expr | undefined,
  sides: readonly { readonly alias: string; readonly columns: ReadonlySet<string> }[],
  by: number,
  left: readonly boolean[],
): LeftJoinTouch | undefined {
  const sideOf = (e: Expr): { side: number; column: string } | undefined => {
    if (e.kind !== 'Identifier' || e.parts.length > 2) return undefined;
    const column = e.parts.at(-1) as string;
    if (column.startsWith('_tp_')) return undefined;
    if (e.parts.length === 2) {
      const side = sides.findIndex((s) => s.alias === e.parts[0]);
      return side >= 0 && sides[side]?.columns.has(column) ? { side, column } : undefined;
    }
    const owners = sides.flatMap((s, i) => (s.columns.has(column) ? [i] : []));
    return owners.length === 1 ? { side: owners[0] as number, column } : undefined;
  };
  const pairs: { side: number; column: string; byColumn: string }[] = [];
  for (const c of conjuncts(on)) {
    if (c.kind !== 'Binary' || c.op !== '=') continue;
    const l = sideOf(c.left);
    const r = sideOf(c.right);
    if (!l || !r) continue;
    const [mine, other] = l.side === by ? [l, r] : r.side === by ? [r, l] : [undefined, undefined];
    if (!mine || !other || other.side >= by || left[other.side]) continue;
    pairs.push({ side: other.side, column: other.column, byColumn: mine.column });
  }
  const first = pairs[0];
  if (!first) return undefined;
  const same = pairs.filter((p) => p.side === first.side);
  return {
    side: first.side,
    columns: same.map((p) => p.column),
    by,
    byColumns: same.map((p) => p.byColumn),
  };
}

/**
 * The netted template's restriction (join-left-netting.ts): side `touch.side`'s read, and the same
 * read of only its rows whose `columns` take values the change of `touch.by` touches. Undefined
 * when a side is not read from a kept table.
 */
export function leftJoinRestriction(
  touch: LeftJoinTouch | undefined,
  read: (index: number) => { def: StreamDefinition; kind: JoinSideKind; kept: string } | undefined,
): { from: string; to: string } | undefined {
  if (!touch) return undefined;
  const side = read(touch.side);
  const by = read(touch.by);
  if (!side || !by) return undefined;
  const values = touchedValuesSql(by.def, touch.by, by.kind, by.kept, touch.byColumns);
  const filter = `(${touch.columns.map(quoteIdent).join(', ')}) IN (${values})`;
  return {
    from: joinSideSql(side.def, touch.side, side.kind, side.kept),
    to: joinSideSql(side.def, touch.side, side.kind, side.kept, filter),
  };
}
