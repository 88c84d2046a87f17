import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { hasRangeCondition } from './join-range.ts';

const CHAIN = '__trb_chain';

/**
 * `a JOIN b ON ... AND <range> JOIN c ON ... AND <range>`: a range join feeding another, as
 * Proton runs it (0009_stream_join_stream_case1 id 37): the query becomes
 * `(SELECT a.x AS x, ..., b.y AS y, ... FROM a JOIN b ON ...) AS __trb_chain JOIN c ON ...`, whose
 * subquery then runs as its own query (stream-bindings.ts). Every column of `a` keeps its name;
 * a column of `b` named like one of `a` (`_tp_time`) is `__trb_b_<name>`; the query's references
 * to `a.x` and `b.y` are rewritten to those names, so the outer range join reads `a`'s
 * `_tp_time` as the joined row's time. `columnsOf` answers a stream's columns (undefined for
 * anything else: the query is left as it is).
 */
export function nestRangeJoinChain(
  select: SelectQuery,
  columnsOf: (db: string | undefined, name: string) => readonly string[] | undefined,
): SelectQuery {
  const outer = select.from;
  if (outer?.kind !== 'Join' || !hasRangeCondition(outer.on)) return select;
  const inner = outer.left;
  if (inner.kind !== 'Join' || !hasRangeCondition(inner.on)) return select;
  const { left, right } = inner;
  if (left.kind !== 'Table' || right.kind !== 'Table') return select;
  const ctes = new Set(select.with?.flatMap((w) => (w.kind === 'Cte' ? [w.name] : [])) ?? []);
  if ([left, right].some((t) => t.database === undefined && ctes.has(t.name))) return select;
  const leftColumns = columnsOf(left.database, left.name);
  const rightColumns = columnsOf(right.database, right.name);
  if (!leftColumns || !rightColumns) return select;
  const la = left.alias ?? left.name;
  const ra = right.alias ?? right.name;
  if (la === ra) return select;

  // Output name of each side's column.
  const names = new Map<string, string>();
  for (const c of leftColumns) names.set(`${la}.${c}`, c);
  for (const c of rightColumns) names.set(`${ra}.${c}`, leftColumns.includes(c) ? `__trb_${ra}_${c}` : c);
  const projection: Expr[] = [...names].map(([qualified, alias]) => {
    const [side, column] = [
      qualified.slice(0, qualified.indexOf('.')),
      qualified.slice(qualified.indexOf('.') + 1),
    ];
    return {
      kind: 'Alias',
      expr: { kind: 'Identifier', parts: [side, column], span: NO_SPAN },
      alias,
      span: NO_SPAN,
    } as Expr;
  });
  const rename = <T extends AnyNode>(node: T): T =>
    replace(node, (n) => {
      if (n.kind !== 'Identifier') return undefined;
      const parts = (n as unknown as Expr & { kind: 'Identifier' }).parts;
      if (parts.length !== 2) return undefined;
      const to = names.get(`${parts[0]}.${parts[1]}`);
      return to === undefined ? undefined : ({ ...(n as object), parts: [CHAIN, to] } as unknown as AnyNode);
    });
  const chained: FromItem = {
    kind: 'SubqueryTable',
    query: { kind: 'Select', distinct: false, columns: projection, from: inner, span: NO_SPAN },
    alias: CHAIN,
    span: NO_SPAN,
  };
  const join: JoinExpr = {
    ...outer,
    left: chained,
    ...(outer.on ? { on: rename(outer.on as AnyNode) as Expr } : {}),
  };
  const { from: _from, ...rest } = select;
  return { ...rename(rest as unknown as AnyNode), from: join } as unknown as SelectQuery;
}
