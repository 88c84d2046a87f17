import { ident } from '../ast/build.ts';
import type { Expr, FunctionCall } from '../ast/expression.ts';
import type { SelectQuery } from '../ast/query.ts';
import { NO_SPAN } from '../ast/span.ts';
import { type AnyNode, replace } from '../ast/walk.ts';

/** The column that carries the HAVING condition out of the emit query (see havingOverLag). */
const HAVING_COLUMN = '__trb_having';

/** Proton's row-order functions an aggregation's items may call: the engine makes them window functions. */
const ROW_ORDER_FUNCTIONS = new Set(['lag', 'lags', 'neighbor']);

function callsRowOrder(e: AnyNode, aliases: ReadonlyMap<string, Expr>, seen: Set<string>): boolean {
  let found = false;
  replace(e, (n) => {
    if (found) return n;
    if (n.kind === 'Subquery') return n;
    if (n.kind === 'Function') {
      const f = n as unknown as FunctionCall;
      if (ROW_ORDER_FUNCTIONS.has(f.name.toLowerCase()) || f.over) found = true;
      return undefined;
    }
    if (n.kind === 'Identifier') {
      const parts = (n as unknown as { parts: string[] }).parts;
      const name = parts.length === 1 ? (parts[0] as string) : undefined;
      const target = name !== undefined && !seen.has(name) ? aliases.get(name) : undefined;
      if (target && name !== undefined) {
        seen.add(name);
        if (callsRowOrder(target, aliases, seen)) found = true;
      }
    }
    return undefined;
  });
  return found;
}

/**
 * An aggregation's emit query whose HAVING calls `lag()` (`SELECT lag(v) AS last_v ... GROUP BY ...
 * HAVING last_v < v`): Proton's lag is its own streaming function over the emitted rows, but the
 * engine computes it as a window function, which HAVING may not name (184). The condition becomes
 * a column of the aggregation, filtered one level up:
 * `SELECT * EXCEPT (__trb_having) FROM (SELECT ..., <having> AS __trb_having ...) WHERE __trb_having`.
 * Other queries are answered as they are.
 */
export function havingOverLag(q: SelectQuery): SelectQuery {
  if (!q.having) return q;
  const aliases = new Map<string, Expr>();
  for (const c of q.columns) if (c.kind === 'Alias') aliases.set(c.alias, c.expr);
  if (!callsRowOrder(q.having, aliases, new Set())) return q;
  // LIMIT counts the rows HAVING keeps, and SETTINGS / FORMAT are the whole query's: one level up.
  const { having, limit, settings, format, ...rest } = q;
  const inner: SelectQuery = {
    ...rest,
    columns: [...q.columns, { kind: 'Alias', expr: having, alias: HAVING_COLUMN, span: NO_SPAN }],
  };
  return {
    kind: 'Select',
    distinct: false,
    columns: [{ kind: 'Asterisk', except: [HAVING_COLUMN], span: NO_SPAN }],
    from: { kind: 'SubqueryTable', query: inner, alias: '__trb_having_rows', span: NO_SPAN },
    where: ident(HAVING_COLUMN),
    ...(limit ? { limit } : {}),
    ...(settings ? { settings } : {}),
    ...(format ? { format } : {}),
    span: NO_SPAN,
  };
}
