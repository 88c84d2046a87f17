import { err } from '../errors/tributary-error.ts';
import { andAll, conjuncts, isAggregation } from '../sql/analyzer/query-facts.ts';
import { call, ident } from '../sql/ast/build.ts';
import type { Expr, IntervalExpr } from '../sql/ast/expression.ts';
import type { EmitClause, FromItem, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';

const DEFAULT_PERIODIC: IntervalExpr = {
  kind: 'Interval',
  value: { kind: 'Number', text: '2', span: NO_SPAN },
  unit: 'SECOND',
  shorthand: true,
  span: NO_SPAN,
};

function isWindow(from: FromItem | undefined): boolean {
  if (!from) return false;
  if (from.kind === 'Join' || from.kind === 'ArrayJoin') return isWindow(from.left);
  return from.kind === 'TableFunction' && ['tumble', 'hop', 'session'].includes(from.name.toLowerCase());
}

/**
 * `EMIT LAST <i> [ON PROCTIME]` (Proton's LastXRule, streaming-sql-notes.md §1.6) as a rewrite:
 * - a tail query gets `WHERE _tp_time >= now64(3, 'UTC') - i` (it backfills the last i);
 * - a window aggregation gets the same predicate;
 * - a global aggregation becomes a hop window of size i sliding by the periodic interval
 *   (2s by default) over `_tp_time`, grouped by `window_end`, with the predicate.
 * With ON PROCTIME the predicate is dropped (processing time starts now).
 */
export function applyEmitLast(
  select: SelectQuery,
  emit: EmitClause | undefined,
): { select: SelectQuery; emit: EmitClause | undefined } {
  if (!emit?.last) return { select, emit };
  const { last, lastOnProctime, periodic, ...rest } = emit;
  const predicate: Expr = {
    kind: 'Binary',
    op: '>=',
    left: ident('_tp_time'),
    right: {
      kind: 'Binary',
      op: '-',
      left: call(
        'now64',
        { kind: 'Number', text: '3', span: NO_SPAN },
        { kind: 'String', value: 'UTC', span: NO_SPAN },
      ),
      right: last,
      span: NO_SPAN,
    },
    span: NO_SPAN,
  };
  const where = lastOnProctime ? select.where : andAll([...conjuncts(select.where), predicate]);
  const withWhere = { ...select, ...(where ? { where } : {}) };
  if (!isAggregation(select) || isWindow(select.from)) {
    return { select: withWhere, emit: { ...rest, ...(periodic ? { periodic } : {}) } };
  }
  const from = select.from;
  if (!from || from.kind === 'Join' || from.kind === 'ArrayJoin') {
    throw err('NOT_IMPLEMENTED', { detail: 'EMIT LAST over a join is not supported' });
  }
  const source: Expr =
    from.kind === 'Table'
      ? ident(...(from.database ? [from.database, from.name] : [from.name]))
      : from.kind === 'SubqueryTable'
        ? { kind: 'Subquery', query: from.query, span: NO_SPAN }
        : call(from.name, ...from.args);
  const time = lastOnProctime
    ? call('now64', { kind: 'Number', text: '3', span: NO_SPAN })
    : ident('_tp_time');
  const [slide, size] = sameUnit(periodic ?? DEFAULT_PERIODIC, last);
  const hop: FromItem = {
    kind: 'TableFunction',
    name: 'hop',
    args: [source, time, slide, size],
    ...(from.kind !== 'TableFunction' && from.alias ? { alias: from.alias } : {}),
    span: NO_SPAN,
  };
  const groupBy = {
    kind: 'GroupBy' as const,
    items: [...(select.groupBy?.items ?? []), ident('window_end')],
    withTotals: false,
    span: NO_SPAN,
  };
  return { select: { ...withWhere, from: hop, groupBy }, emit: rest };
}

const UNIT_SECONDS: Partial<Record<IntervalExpr['unit'], number>> = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  WEEK: 604800,
};

/** Two intervals in one unit (hop needs its slide and size alike): the finer of the two, when both are fixed. */
function sameUnit(a: Expr, b: Expr): [Expr, Expr] {
  if (a.kind !== 'Interval' || b.kind !== 'Interval' || a.unit === b.unit) return [a, b];
  const sa = UNIT_SECONDS[a.unit];
  const sb = UNIT_SECONDS[b.unit];
  if (sa === undefined || sb === undefined || a.value.kind !== 'Number' || b.value.kind !== 'Number')
    return [a, b];
  const inSeconds = (i: IntervalExpr, unit: number): IntervalExpr => ({
    ...i,
    unit: 'SECOND',
    shorthand: false,
    value: { kind: 'Number', text: String(Number((i.value as { text: string }).text) * unit), span: NO_SPAN },
  });
  return [inSeconds(a, sa), inSeconds(b, sb)];
}
