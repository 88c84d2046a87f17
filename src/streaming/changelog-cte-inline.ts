import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace, walk } from '../sql/ast/walk.ts';
import { isClauseFreeSelect } from './clause-free-select.ts';

/**
 * `WITH c AS (SELECT j, kk FROM s) ... changelog(c, kk)`: the CTE only picks columns of one
 * stream, so its changelog by `kk` is the changelog of `s` by `kk` with those columns; read as
 * `changelog(s, kk)` (0027 ids 6, 9). A column picked from each version of a key is the same
 * column of the key's latest row, so projecting first or last answers the same rows; a filter,
 * a computed or renamed column, or anything else in the CTE leaves the query unchanged (the CTE
 * then runs as its own query, changelog-input.ts).
 */
export function inlineChangelogCtes(query: Query): Query {
  if (query.kind !== 'Select' || !query.with?.length) return query;
  const plain = new Map<string, FromItem>();
  for (const w of query.with) {
    if (w.kind !== 'Cte' || w.query.kind !== 'Select') continue;
    if (isProjection(w.query)) plain.set(w.name, w.query.from as FromItem);
  }
  if (plain.size === 0) return query;
  const inlined = replace(query as SelectQuery, (n) => {
    if (n.kind !== 'TableFunction') return undefined;
    const f = n as unknown as FromItem & { kind: 'TableFunction' };
    const first = f.args[0];
    if (f.name.toLowerCase() !== 'changelog' || first?.kind !== 'Identifier' || first.parts.length !== 1)
      return undefined;
    const source = plain.get(first.parts[0] as string);
    if (source?.kind !== 'Table') return undefined;
    const stream: Expr = {
      kind: 'Identifier',
      parts: source.database ? [source.database, source.name] : [source.name],
      span: first.span,
    };
    return { ...f, args: [stream, ...f.args.slice(1)] } as unknown as AnyNode;
  });
  // A CTE nothing reads any more is dropped (it would bind its stream for nothing).
  const withItems = inlined.with?.filter(
    (w) => w.kind !== 'Cte' || !plain.has(w.name) || mentions(inlined, w.name),
  );
  const { with: _with, ...rest } = inlined;
  return withItems?.length ? { ...rest, with: withItems } : rest;
}

/** Does anything but the CTE's own definition name `name` (a table, a column qualifier)? */
function mentions(q: SelectQuery, name: string): boolean {
  let found = false;
  const others = { ...q, with: q.with?.filter((w) => !(w.kind === 'Cte' && w.name === name)) };
  walk(others as unknown as AnyNode, (n) => {
    if (n.kind === 'Table' && (n as unknown as { name: string }).name === name) found = true;
    if (n.kind === 'Identifier' && (n as unknown as { parts: string[] }).parts[0] === name) found = true;
    return undefined;
  });
  return found;
}

/** `SELECT a, b FROM s`: plain columns of one named table, nothing else. */
function isProjection(q: SelectQuery): boolean {
  const from = q.from;
  return (
    from?.kind === 'Table' &&
    !q.with?.length &&
    isClauseFreeSelect(q) &&
    q.columns.every((c) => c.kind === 'Identifier' && c.parts.length === 1)
  );
}
