import { isAggregation } from '../sql/analyzer/query-facts.ts';
import { ident } from '../sql/ast/build.ts';
import type { FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import type { BindingContext } from './stream-bindings.ts';

/**
 * A subquery that joins changelog inputs (versioned_kv, changelog_kv, changelog streams,
 * `changelog(...)`) without aggregating, read by an aggregation (`SELECT count() FROM (SELECT ...
 * FROM kv_a LEFT JOIN kv_b ON ...)`): it runs as its own streaming query, whose rows carry their
 * `_tp_delta`, and the aggregation retracts them as over any changelog (stream-bindings.ts).
 */
export function isNestedChangelogJoin(
  q: Query,
  ctx: BindingContext,
  isCte: (name: string) => boolean,
): q is SelectQuery {
  if (q.kind !== 'Select' || q.from?.kind !== 'Join' || isAggregation(q)) return false;
  const items = itemsOf(q.from);
  // A side naming a CTE of the outer query (a CTE's rows are not a query of their own here).
  const named = (e: unknown) =>
    (e as { kind?: string }).kind === 'Identifier' && isCte(String((e as { parts: string[] }).parts.at(-1)));
  if (
    items.some(
      (item) =>
        (item.kind === 'Table' && item.database === undefined && isCte(item.name)) ||
        (item.kind === 'TableFunction' && item.args.some(named)),
    )
  )
    return false;
  return items.some((item) => {
    if (item.kind === 'TableFunction') return item.name.toLowerCase() === 'changelog';
    if (item.kind !== 'Table') return false;
    const r = ctx.resolver.resolve(item.database, item.name);
    if (!r || r.bounded || r.kind !== 'stream') return false;
    const def = ctx.streamDefinition(r, item.database, item.name);
    return def !== undefined && def.mode !== 'append';
  });
}

/** The subquery with `_tp_delta` selected (the join's planner makes it the row's sign). */
export function selectingDelta(q: SelectQuery): SelectQuery {
  const has = q.columns.some((c) => {
    const e = c.kind === 'Alias' ? undefined : c;
    return (
      (c.kind === 'Alias' && c.alias === '_tp_delta') ||
      (e?.kind === 'Identifier' && e.parts.at(-1) === '_tp_delta') ||
      (e?.kind === 'Asterisk' && !e.qualifier && !e.except?.length)
    );
  });
  return has ? q : { ...q, columns: [...q.columns, ident('_tp_delta')] };
}

function itemsOf(item: FromItem): FromItem[] {
  return item.kind === 'Join' ? [...itemsOf(item.left), ...itemsOf(item.right)] : [item];
}
