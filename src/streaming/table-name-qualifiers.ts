import type { FromItem, Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';

/**
 * `s.col` or `db.s.col` where the FROM reads stream `s` under another alias (`FROM s AS a JOIN t
 * AS b ... WHERE s._tp_sn > 1`) read as `a.col`, as Proton's analyzer finds a table by its own
 * name too (0020_seek_to id 8, a rewind predicate per side). Only names that no other FROM item
 * of the query is called or aliased, and that one item reads.
 */
export function withTableNameQualifiers(query: Query): Query {
  if (query.kind !== 'Select' || !query.from) return query;
  const items = chainOf(query.from);
  const taken = new Set<string>();
  for (const f of items) {
    if (f.kind === 'Table') taken.add(f.alias ?? f.name);
    else if ((f.kind === 'TableFunction' || f.kind === 'SubqueryTable') && f.alias) taken.add(f.alias);
  }
  const byName = new Map<string, string | undefined>();
  for (const f of items) {
    if (f.kind !== 'Table' || !f.alias || f.alias === f.name || taken.has(f.name)) continue;
    for (const key of [f.name, ...(f.database ? [`${f.database}.${f.name}`] : [`default.${f.name}`])])
      byName.set(key, byName.has(key) ? undefined : f.alias);
  }
  if (byName.size === 0) return query;
  const select = query as SelectQuery;
  return replace(select, (n) => {
    // A nested query has its own FROM: its names are its own.
    if (n !== (select as unknown as AnyNode) && (n.kind === 'Select' || n.kind === 'Union')) return n;
    if (n.kind !== 'Identifier') return undefined;
    const parts = (n as unknown as { parts: readonly string[] }).parts;
    if (parts.length < 2 || parts.length > 3) return undefined;
    const alias = byName.get(parts.slice(0, -1).join('.'));
    if (!alias) return undefined;
    return { ...(n as object), parts: [alias, parts.at(-1) as string] } as unknown as AnyNode;
  });
}

function chainOf(item: FromItem): FromItem[] {
  return item.kind === 'Join' ? [...chainOf(item.left), item.right] : [item];
}
