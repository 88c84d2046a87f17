import { err } from '../../errors/tributary-error.ts';
import type { Expr } from '../ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../ast/query.ts';
import type { TableResolver } from '../translator/resolver.ts';

/**
 * Is a query streaming (unbounded)? A FROM over a stream without table() is streaming
 * (streaming-sql-notes.md §1.3); views and materialized views resolve through the resolver, a
 * view over table() is bounded; `SETTINGS query_mode='table'` makes the whole query historical.
 */
export function isStreamingQuery(query: Query, resolver: TableResolver): boolean {
  return new StreamingCheck(resolver).query(query, []);
}

const STREAMING_KINDS = new Set(['stream', 'materialized_view', 'external_stream']);

class StreamingCheck {
  private depth = 0;
  constructor(private readonly resolver: TableResolver) {}

  query(q: Query, ctes: ReadonlyMap<string, Query>[]): boolean {
    if (q.kind === 'Union') return q.queries.some((m) => this.query(m, ctes));
    return this.select(q, ctes);
  }

  private select(q: SelectQuery, outer: ReadonlyMap<string, Query>[]): boolean {
    const mode = q.settings?.find((s) => s.name.toLowerCase() === 'query_mode');
    if (mode?.value.kind === 'String' && mode.value.value.toLowerCase() === 'table') return false;
    const local = new Map<string, Query>();
    for (const w of q.with ?? []) if (w.kind === 'Cte') local.set(w.name, w.query);
    const ctes = [...outer, local];
    return q.from !== undefined && this.from(q.from, ctes);
  }

  private from(item: FromItem, ctes: ReadonlyMap<string, Query>[]): boolean {
    switch (item.kind) {
      case 'Join':
        return this.from(item.left, ctes) || this.from(item.right, ctes);
      case 'ArrayJoin':
        return this.from(item.left, ctes);
      case 'SubqueryTable':
        return this.query(item.query, ctes);
      case 'Table':
        return this.name(item.database, item.name, ctes);
      case 'TableFunction':
        return this.tableFunction(item.name, item.args, ctes);
    }
  }

  private tableFunction(name: string, args: readonly Expr[], ctes: ReadonlyMap<string, Query>[]): boolean {
    const lower = name.toLowerCase();
    if (lower === 'table') return false;
    if (!['tumble', 'hop', 'session', 'dedup', 'changelog'].includes(lower)) return false;
    const source = args[0];
    return source !== undefined && this.source(source, ctes);
  }

  private source(e: Expr, ctes: ReadonlyMap<string, Query>[]): boolean {
    if (e.kind === 'Identifier' && e.parts.length <= 2) {
      return e.parts.length === 2
        ? this.name(e.parts[0], e.parts[1] as string, ctes)
        : this.name(undefined, e.parts[0] as string, ctes);
    }
    if (e.kind === 'Subquery') return this.query(e.query, ctes);
    if (e.kind === 'Function') return this.tableFunction(e.name, e.args, ctes);
    return false;
  }

  private name(database: string | undefined, name: string, ctes: ReadonlyMap<string, Query>[]): boolean {
    if (database === undefined) {
      for (let i = ctes.length - 1; i >= 0; i--) {
        const cte = ctes[i]?.get(name);
        if (cte) return this.query(cte, ctes.slice(0, i + 1));
      }
    }
    const r = this.resolver.resolve(database, name);
    if (!r) throw err('UNKNOWN_STREAM', { name: database !== undefined ? `${database}.${name}` : name });
    if (r.bounded) return false;
    if (r.kind === 'view') {
      if (!r.viewQuery) return true;
      if (this.depth > 16)
        throw err('INCORRECT_QUERY', { detail: `View ${name} refers to itself (views nested too deeply)` });
      this.depth++;
      try {
        return this.query(r.viewQuery, []);
      } finally {
        this.depth--;
      }
    }
    return STREAMING_KINDS.has(r.kind);
  }
}
