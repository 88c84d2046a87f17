import type { FromItem, Query, SelectQuery, WithItem } from '../sql/ast/query.ts';
import { type AnyNode, walk } from '../sql/ast/walk.ts';

/**
 * `WITH r1 AS (...), r2 AS (...) SELECT ... FROM (SELECT ... FROM changelog(r1, id) JOIN
 * changelog(r2, id) ON ...) GROUP BY ...` (0031 id 3): the subquery joining changelog() of the
 * outer query's CTEs runs as its own query (nested-changelog-join.ts), so the CTEs it reads move
 * into its WITH, when nothing else in the outer query names them. The CTEs' scope narrows to the
 * one subquery that reads them, which answers the same rows.
 */
export function pushChangelogCtesIntoJoin(query: Query): Query {
  if (query.kind !== 'Select' || !query.with?.length || query.from?.kind !== 'SubqueryTable') return query;
  const sub = query.from.query;
  if (sub.kind !== 'Select' || sub.from?.kind !== 'Join') return query;
  const own = new Set((sub.with ?? []).flatMap((w) => (w.kind === 'Cte' ? [w.name] : [])));
  const read = changelogArgs(sub.from);
  const moved = query.with.filter(
    (w): w is WithItem & { kind: 'Cte' } =>
      w.kind === 'Cte' && read.has(w.name) && !own.has(w.name) && !namedOutside(query, w.name),
  );
  if (moved.length === 0) return query;
  // A moved CTE may read another CTE of the outer query: those stay visible by moving too, when
  // nothing else names them; otherwise nothing moves.
  const names = new Set(moved.map((w) => w.name));
  for (const w of moved) {
    for (const other of query.with) {
      if (other.kind === 'Cte' && !names.has(other.name) && namesIn(w.query).has(other.name)) return query;
    }
  }
  const inner: SelectQuery = { ...sub, with: [...moved, ...(sub.with ?? [])] };
  const rest = query.with.filter((w) => !(w.kind === 'Cte' && names.has(w.name)));
  const { with: _with, ...outer } = query;
  return {
    ...outer,
    ...(rest.length ? { with: rest } : {}),
    from: { ...query.from, query: inner },
  };
}

/** First arguments of `changelog(name, ...)` in a chain of joins. */
function changelogArgs(item: FromItem): Set<string> {
  const names = new Set<string>();
  const visit = (f: FromItem) => {
    if (f.kind === 'Join') {
      visit(f.left);
      visit(f.right);
    } else if (f.kind === 'TableFunction' && f.name.toLowerCase() === 'changelog') {
      const first = f.args[0];
      if (first?.kind === 'Identifier' && first.parts.length === 1) names.add(first.parts[0] as string);
    }
  };
  visit(item);
  return names;
}

/** Whether the outer query names `name` anywhere but in its FROM subquery and the CTE itself. */
function namedOutside(q: SelectQuery, name: string): boolean {
  const { from: _from, ...rest } = q;
  const others = { ...rest, with: q.with?.filter((w) => !(w.kind === 'Cte' && w.name === name)) };
  return namesIn(others as SelectQuery).has(name);
}

/** Table names, identifiers' first parts: every name a query might read a CTE by. */
function namesIn(q: Query | SelectQuery): Set<string> {
  const found = new Set<string>();
  walk(q as unknown as AnyNode, (n) => {
    if (n.kind === 'Table') found.add((n as unknown as { name: string }).name);
    if (n.kind === 'Identifier') found.add((n as unknown as { parts: string[] }).parts[0] as string);
    return undefined;
  });
  return found;
}
