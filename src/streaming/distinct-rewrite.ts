import { isAggregation } from '../sql/analyzer/query-facts.ts';
import { alias, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { EmitClause, FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';

/** The key column of the i-th DISTINCT column in the rewritten source. */
const keyColumn = (i: number) => `__trb_distinct_${i}`;

/**
 * A streaming `SELECT DISTINCT cols FROM s [WHERE w]` without aggregation, as Proton answers it:
 * each distinct row once, ever (Proton's DistinctTransform keeps, and checkpoints, the rows it has
 * let through, also across the periodic emits of the aggregation it plans). Rewritten as
 *
 *   SELECT cols FROM dedup((SELECT *, _tp_sn, c0 AS __trb_distinct_0, ... FROM s WHERE w),
 *                          __trb_distinct_0, ..., 0)
 *
 * so the dedup() machinery keeps the seen rows across steps and in the checkpoint (limit 0: all
 * of them). `EMIT PERIODIC` (which Proton accepts here) only paces the output; rows leave as they
 * come. Other queries are answered unchanged: aggregations, `DISTINCT *`, joins in FROM.
 */
export function distinctAsDedup(query: Query): Query {
  if (query.kind !== 'Select' || !query.distinct || isAggregation(query)) return query;
  const from = query.from;
  if (!from || from.kind === 'Join' || from.kind === 'ArrayJoin') return query;
  if (query.columns.some((c) => c.kind === 'Asterisk')) return query;
  const keys = query.columns.map((c) => (c.kind === 'Alias' ? c.expr : c));
  const inner: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: [
      { kind: 'Asterisk', span: NO_SPAN },
      // the sequence number dedup() keeps each key's first row by (`*` leaves it out)
      ident('_tp_sn'),
      ...keys.map((k, i) => alias(k, keyColumn(i))),
    ],
    from,
    ...(query.prewhere ? { prewhere: query.prewhere } : {}),
    ...(query.where ? { where: query.where } : {}),
    span: NO_SPAN,
  };
  const source = sourceName(from);
  const dedup: FromItem = {
    kind: 'TableFunction',
    name: 'dedup',
    args: [
      { kind: 'Subquery', query: inner, span: NO_SPAN } as Expr,
      ...keys.map((_, i) => ident(keyColumn(i))),
      num(0),
    ],
    ...(source ? { alias: source } : {}),
    span: NO_SPAN,
  };
  const { where: _w, prewhere: _p, emit, ...rest } = query;
  const kept = pacingOnly(emit) ? undefined : emit;
  return { ...rest, distinct: false, from: dedup, ...(kept ? { emit: kept } : {}) };
}

/** The name the select list may qualify columns with (`s.id`), kept on the dedup() source. */
function sourceName(from: FromItem): string | undefined {
  if (from.kind === 'Table') return from.alias ?? from.name;
  if (from.kind === 'TableFunction' || from.kind === 'SubqueryTable') return from.alias;
  return undefined;
}

/** `EMIT PERIODIC i` and nothing else. */
function pacingOnly(emit: EmitClause | undefined): boolean {
  if (!emit?.periodic) return false;
  return (
    !emit.mode &&
    !emit.afterWatermark &&
    !emit.delay &&
    !emit.repeat &&
    !emit.onUpdate &&
    !emit.timeout &&
    !emit.last
  );
}
