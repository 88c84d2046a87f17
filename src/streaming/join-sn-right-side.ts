import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';

/**
 * In the WHERE of a join of two inputs, `x._tp_sn` of either side filters the joined row's
 * `_tp_sn`, which is the right side's; each predicate still rewinds (start-position.ts).
 *
 * Why: `_tp_sn` is a virtual column, not among the left input's stored columns. Proton's analyzer
 * (ClickHouse's qualified-name translation) gives a right-side column the long name `b.col` only
 * when the left side has a column of that name, so the right side's `_tp_sn` keeps the short name
 * `_tp_sn`, as does the left side's, and the WHERE over the joined block reads one `_tp_sn`: the
 * right side's. Proton's expected rows of 0020_seek_to id 8 follow from this and from no per-side
 * reading: `a._tp_sn > 1 AND b._tp_sn > 2` over a = keys 1..4 (sn 0..3) and b = keys 1, 1, 2, 2
 * (sn 0..3) answers one row of key 2 (a rewound to sn 1, b's sn 3 kept), and `a._tp_sn > 0 AND
 * b._tp_sn < 4` a count of 3 (b's sn 1..3 meet all of a).
 *
 * Only qualified names (`a._tp_sn`, after table-name-qualifiers.ts turned `s._tp_sn` into the
 * side's alias) of a two-input join; `_tp_time` is a stored column and stays per side.
 */
export function withJoinSnOnRightSide(query: Query): Query {
  if (query.kind !== 'Select' || !query.where || query.from?.kind !== 'Join') return query;
  const join = query.from;
  const left = sideName(join.left);
  const right = sideName(join.right);
  if (!left || !right || left === right) return query;
  const select = query as SelectQuery;
  const where = replace(select.where as AnyNode, (n) => {
    if (n.kind === 'Select' || n.kind === 'Union' || n.kind === 'Subquery') return n;
    if (n.kind !== 'Identifier') return undefined;
    const parts = (n as unknown as { parts: readonly string[] }).parts;
    if (parts.length !== 2 || parts[1] !== '_tp_sn' || parts[0] !== left) return undefined;
    return { ...(n as object), parts: [right, '_tp_sn'] } as unknown as AnyNode;
  }) as unknown as Expr;
  return where === select.where ? query : { ...select, where };
}

/** The name a FROM item of a two-input join is referred to by; undefined for a nested join. */
function sideName(item: FromItem): string | undefined {
  if (item.kind === 'Table') return item.alias ?? item.name;
  if (item.kind === 'TableFunction' || item.kind === 'SubqueryTable') return item.alias;
  return undefined;
}
