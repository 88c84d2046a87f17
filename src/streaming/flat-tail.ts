import type { AliasExpr, Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { findAll } from '../sql/ast/walk.ts';
import { parseExpression } from '../sql/parser/parse.ts';
import { P } from './sql-template.ts';

/**
 * A tail printed flat (issue 12): `SELECT <cols> FROM <stream's table> WHERE <range> AND (<where>)
 * ORDER BY _tp_sn` instead of reading a subquery `(SELECT *, _tp_sn FROM <table> WHERE <range>
 * ORDER BY _tp_sn)`. Same rows in the same order (the step is single-threaded and ordered by
 * `_tp_sn` either way); measured 0.5-0.9 ms less engine CPU per step (~20%; bench/README.md,
 * "latency"). Only for the plainest tails: one stream, a plain SELECT ... FROM ... [WHERE ...]
 * with no clause that orders, groups, limits or nests, no function of the rows' order, and no
 * name `_tp_sn` of its own.
 */

/**
 * Functions whose values depend on the rows around a row or that make several rows of one: in the
 * subquery form they see the rows ordered by `_tp_sn`, in the flat form before the ORDER BY (and
 * the engine's sort does not keep the order of the rows of one arrayJoin). Names lower-cased,
 * without underscores (Proton spells them with).
 */
const ROW_ORDER_FUNCTIONS = new Set([
  'arrayjoin',
  'rownumberinblock',
  'rownumberinallblocks',
  'blocknumber',
  'blocksize',
  'neighbor',
  'runningdifference',
  'runningdifferencestartingwithfirstvalue',
  'runningaccumulate',
  'lag',
  'lags',
  'lead',
  'rownumber',
]);

/** Literals standing for the step's bounds while the query is translated (then its markers). */
const LO_SENTINEL = '7357735773577357001';
const HI_SENTINEL = '7357735773577357002';

/** The flat form of `select` with sentinel bounds, or undefined when the query is not that plain. */
export function flatTailSelect(select: SelectQuery): SelectQuery | undefined {
  if (
    select.from?.kind !== 'Table' ||
    select.with ||
    select.distinct ||
    select.distinctOn ||
    select.top ||
    select.prewhere ||
    select.partitionBy ||
    select.shuffleBy ||
    select.groupBy ||
    select.having ||
    select.windows ||
    select.orderBy ||
    select.limitBy ||
    select.limit
  )
    return undefined;
  // A subquery anywhere (IN, EXISTS, scalar) or a name `_tp_sn` of the query's own: not flat.
  if (findAll(select, (n): n is Expr => n.kind === 'Subquery').length > 0) return undefined;
  const calls = findAll(select, (n): n is FunctionCall => n.kind === 'Function');
  if (
    calls.some(
      (f) => f.over !== undefined || ROW_ORDER_FUNCTIONS.has(f.name.toLowerCase().replaceAll('_', '')),
    )
  )
    return undefined;
  const aliases = findAll(select, (n): n is AliasExpr => n.kind === 'Alias');
  if (aliases.some((a) => a.alias.toLowerCase() === '_tp_sn')) return undefined;
  const range = parseExpression(`_tp_sn > ${LO_SENTINEL} AND _tp_sn <= ${HI_SENTINEL}`);
  const where: Expr = select.where
    ? { kind: 'Binary', op: 'AND', left: range, right: select.where, span: NO_SPAN }
    : range;
  return {
    ...select,
    where,
    orderBy: [{ kind: 'OrderItem', expr: parseExpression('_tp_sn'), span: NO_SPAN }],
  };
}

/**
 * The translated flat tail with the sentinels turned into the range markers of source `index`;
 * undefined unless each sentinel appears exactly once (so nothing else was rewritten into it).
 */
export function withRangeMarkers(sql: string, index: number): string | undefined {
  const once = (s: string) => sql.split(s).length === 2;
  if (!once(LO_SENTINEL) || !once(HI_SENTINEL)) return undefined;
  return sql.replace(LO_SENTINEL, P.lo(index)).replace(HI_SENTINEL, P.hi(index));
}
