import { call } from '../sql/ast/build.ts';
import { sameTree } from '../sql/ast/compare.ts';
import type { Expr, FunctionCall, WindowSpec } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { replace } from '../sql/ast/walk.ts';
import { isAggregateName } from '../sql/names/function-catalog.ts';

/**
 * In a streaming aggregation, `agg(x) OVER (PARTITION BY k)` means "aggregate per substream k"
 * (streaming-sql-notes.md §1.5): the same as `agg(x)` with `PARTITION BY k` on the query. Rewrite
 * such calls to plain aggregates and add their keys to the query's PARTITION BY.
 */
export function overToSubstreams(select: SelectQuery): SelectQuery {
  const keys: Expr[] = [...(select.partitionBy ?? [])];
  let changed = false;
  const rewrite = <T extends object>(node: T): T =>
    replace(node as never, (n) => {
      if (n.kind !== 'Function') return undefined;
      const f = n as FunctionCall;
      const over = f.over;
      if (!over || typeof over === 'string' || !isAggregateName(f.name)) return undefined;
      const spec = over as WindowSpec;
      if (spec.orderBy.length > 0 || spec.frame || spec.base) return undefined;
      for (const k of spec.partitionBy) if (!keys.some((x) => sameTree(x, k))) keys.push(k);
      changed = true;
      const { over: _over, ...plain } = f;
      return plain;
    }) as T;
  const columns = select.columns.map((c) => rewrite(c));
  const having = select.having ? rewrite(select.having) : undefined;
  if (!changed) return select;
  return { ...select, columns, ...(having ? { having } : {}), partitionBy: keys };
}

/**
 * A row's substream key: its PARTITION BY values hashed to a string ('' without PARTITION BY).
 * Watermarks, emit versions, sessions and lag() carries all key substreams by this one expression.
 */
export function substreamKey(partition: readonly Expr[]): Expr {
  return partition.length
    ? call('to_string', call('city_hash64', ...partition))
    : { kind: 'String', value: '', span: NO_SPAN };
}
