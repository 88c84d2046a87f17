/* What a query that joins says about its sides (join-planner.ts and the per-shape planners): its
 * CTEs, the sources an item reads, its joins, the names and columns of its FROM items. */
import { err } from '../errors/tributary-error.ts';
import { isAggregation } from '../sql/analyzer/query-facts.ts';
import type { FromItem, JoinExpr, Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, walk } from '../sql/ast/walk.ts';
import type { JoinPlanContext } from './join-planner.ts';
import type { BoundSource } from './stream-bindings.ts';

const MARKER = /__trb_src_(\d+)/g;

export const notImplemented = (detail: string) => err('NOT_IMPLEMENTED', { detail });

/** Every SELECT of a query (nested in FROM, CTEs, expressions), with the CTE bodies by name. */
export function ctesOf(q: Query): Map<string, Query> {
  const out = new Map<string, Query>();
  walk(q as AnyNode, (n) => {
    if (n.kind === 'Cte') {
      const c = n as unknown as { name: string; query: Query };
      out.set(c.name, c.query);
    }
    return undefined;
  });
  return out;
}

/** The bound sources an AST node reads (through CTE names too). */
export function sourcesIn(
  node: unknown,
  ctes: ReadonlyMap<string, Query>,
  seen = new Set<string>(),
): Set<number> {
  const out = new Set<number>();
  const text = JSON.stringify(node ?? {});
  for (const m of text.matchAll(MARKER)) out.add(Number(m[1]));
  walk(node as AnyNode, (n) => {
    if (n.kind === 'Table') {
      const t = n as unknown as { database?: string; name: string };
      const body = t.database === undefined ? ctes.get(t.name) : undefined;
      if (body && !seen.has(t.name)) {
        seen.add(t.name);
        for (const s of sourcesIn(body, ctes, seen)) out.add(s);
      }
    }
    return undefined;
  });
  return out;
}

export function joinsIn(q: SelectQuery): JoinExpr[] {
  const out: JoinExpr[] = [];
  walk(q as AnyNode, (n) => {
    if (n.kind === 'Join') out.push(n as unknown as JoinExpr);
    return undefined;
  });
  return out;
}

export function joinName(j: JoinExpr): string {
  if (j.joinKind === 'COMMA') return 'a comma join (CROSS JOIN)';
  return `${j.joinKind}${j.strictness ? ` ${j.strictness}` : ''} JOIN`;
}

/** The alias a FROM item is known by in its query. */
export function aliasOf(item: FromItem): string | undefined {
  if (item.kind === 'Table') return item.alias ?? item.name;
  if (item.kind === 'TableFunction' || item.kind === 'SubqueryTable') return item.alias;
  return undefined;
}

/** The kv source of a join side that is one versioned_kv / changelog_kv stream, if it is. */
export function kvSide(item: FromItem, sources: readonly BoundSource[], ctes: ReadonlyMap<string, Query>) {
  const inside = [...sourcesIn(item, ctes)];
  if (inside.length !== 1 || item.kind !== 'Table') return undefined;
  const s = sources[inside[0] as number];
  if (s?.kind !== 'stream' || s.definition.mode !== 'versioned_kv') return undefined;
  return s.index;
}

/** The source of a join side that is one append stream named in the FROM, if it is. */
export function appendSide(
  item: FromItem,
  sources: readonly BoundSource[],
  ctes: ReadonlyMap<string, Query>,
) {
  const inside = [...sourcesIn(item, ctes)];
  if (inside.length !== 1 || item.kind !== 'Table' || !/^__trb_src_\d+$/.test(item.name)) return undefined;
  const s = sources[inside[0] as number];
  if (s?.kind !== 'stream' || s.definition.mode !== 'append') return undefined;
  return s;
}

/** The join sides of a left-deep chain of joins (`a JOIN b ... JOIN c`), in order. */
export function chainOf(item: FromItem): FromItem[] {
  return item.kind === 'Join' ? [...chainOf(item.left), item.right] : [item];
}

/** The columns a FROM item brings, by name (undefined when not known). */
export function columnsOf(
  item: FromItem,
  sources: readonly BoundSource[],
  ctx: JoinPlanContext,
): Set<string> | undefined {
  const ofSource = (name: string): Set<string> | undefined => {
    const m = /^__trb_src_(\d+)$/.exec(name);
    const s = m ? sources[Number(m[1])] : undefined;
    if (s?.kind === 'derived') {
      const names = ctx.derivedColumns?.(s.index);
      return names ? new Set([...names, '_tp_time', '_tp_sn']) : undefined;
    }
    if (s?.kind !== 'stream') return undefined;
    return new Set([...s.definition.columns.map((c) => c.name), '_tp_time', '_tp_sn']);
  };
  if (item.kind === 'Table') return ofSource(item.name);
  if (item.kind === 'TableFunction') {
    const arg = item.args[0];
    const base = arg?.kind === 'Identifier' ? ofSource(arg.parts.at(-1) as string) : undefined;
    return base ? new Set([...base, 'window_start', 'window_end']) : undefined;
  }
  if (item.kind === 'SubqueryTable' && item.query.kind === 'Select') {
    const out = new Set<string>();
    for (const c of item.query.columns) {
      if (c.kind === 'Alias') out.add(c.alias);
      else if (c.kind === 'Identifier') out.add(c.parts.at(-1) as string);
      else if (c.kind === 'Asterisk' && item.query.from) {
        const inner = columnsOf(item.query.from, sources, ctx);
        if (!inner) return undefined;
        for (const n of inner) out.add(n);
      }
    }
    return out;
  }
  return undefined;
}

/** A FROM item naming a CTE whose body is a plain SELECT (no aggregation, join or window). */
export function cteOverOne(item: FromItem, ctes: ReadonlyMap<string, Query>): boolean {
  const body = item.kind === 'Table' && item.database === undefined ? ctes.get(item.name) : undefined;
  return (
    body?.kind === 'Select' &&
    !isAggregation(body) &&
    body.from?.kind === 'Table' &&
    !body.limit &&
    !body.limitBy &&
    !body.orderBy?.length
  );
}
