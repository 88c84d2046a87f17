import { err } from '../errors/tributary-error.ts';
import type { Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, walk } from '../sql/ast/walk.ts';
import { isAggregateName } from '../sql/names/function-catalog.ts';

/**
 * Stateful functions that are not aggregates: they remember earlier rows (Proton's
 * FunctionStreamingNeighbor, `isStateful()`), so a query's PARTITION BY makes them per substream.
 */
const STATEFUL = new Set(['lag', 'lags', 'neighbor']);

/**
 * Proton's checks of window functions (`f(...) OVER (...)`) in a streaming SELECT
 * (InterpreterSelectQuery::checkAndPrepareStreamingFunctions, before the query is analyzed):
 * - a query-level PARTITION BY first makes each top-level select item that calls an aggregate or
 *   a stateful function (lag, lags, neighbor) an OVER (PARTITION BY keys) call (PartitionByVisitor);
 * - then, over the SELECT's own level (GetAggregatesVisitor): aggregates without OVER and calls
 *   with OVER cannot be mixed, nor aggregates with OVER and other functions with OVER. Both are
 *   NOT_IMPLEMENTED (48), raised before any other check of the query (e.g. 215 for a column that is
 *   neither aggregated nor grouped: 0016_substream_case id 4).
 */
export function checkOverCompatibility(select: SelectQuery): void {
  const partitioned = (select.partitionBy?.length ?? 0) > 0;
  const aggregates: string[] = [];
  const aggregateOvers: string[] = [];
  const otherOvers: string[] = [];
  const overOf = (f: FunctionCall) => (isAggregateName(f.name) ? aggregateOvers : otherOvers).push(f.name);
  // Top-level select items a PARTITION BY turns into OVER calls.
  const converted = new Set<FunctionCall>();
  if (partitioned)
    for (const c of select.columns) {
      const e: Expr = c.kind === 'Alias' ? c.expr : c;
      if (e.kind !== 'Function' || e.over !== undefined) continue;
      const name = e.name.toLowerCase();
      if (isAggregateName(name) || STATEFUL.has(name)) converted.add(e);
    }
  const visit = (node: AnyNode): unknown => {
    if (node.kind === 'Select' || node.kind === 'Subquery' || node.kind === 'SubqueryTable') return false;
    if (node.kind !== 'Function') return undefined;
    const f = node as unknown as FunctionCall;
    if (converted.has(f) || f.over !== undefined) {
      overOf(f);
      return undefined;
    }
    if (isAggregateName(f.name)) {
      aggregates.push(f.name);
      return false;
    }
    return undefined;
  };
  const parts: (AnyNode | undefined)[] = [
    ...select.columns,
    select.prewhere,
    select.where,
    ...(select.groupBy?.items ?? []),
    select.having,
    ...(select.orderBy ?? []),
  ];
  for (const p of parts) if (p) walk(p, visit);
  const overs = [...aggregateOvers, ...otherOvers];
  if (aggregates.length > 0 && overs.length > 0)
    throw err('NOT_IMPLEMENTED', {
      detail: `Window over aggregation is not compatible with non-window over aggregation in the same streaming query (${overs[0]}(...) OVER beside ${aggregates[0]}(...)); aggregate per substream with PARTITION BY or OVER (PARTITION BY ...) on every aggregate`,
    });
  if (aggregateOvers.length > 0 && otherOvers.length > 0)
    throw err('NOT_IMPLEMENTED', {
      detail: `Window over aggregation is not compatible with window over non-aggregation in the same streaming query (${aggregateOvers[0]}(...) and ${otherOvers[0]}(...) are both per substream${partitioned ? ', the PARTITION BY making them OVER (PARTITION BY ...)' : ''})`,
    });
}
