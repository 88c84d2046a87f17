import type { Expr, FunctionCall, Identifier } from '../ast/expression.ts';
import type { FromItem, Query, SelectQuery } from '../ast/query.ts';
import { type AnyNode, isNode, walk } from '../ast/walk.ts';
import { isAggregateName, isStreamingOnlyFunction } from '../names/function-catalog.ts';

/**
 * Facts about queries that the analyzer and the streaming planner need. All functions look at
 * one query level unless they say otherwise: nested queries (subqueries, CTE bodies) are not
 * entered, because their columns and aggregates belong to them.
 */

/** Does `n` start a nested query level? */
function isNestedQuery(n: AnyNode): boolean {
  return (
    n.kind === 'Subquery' ||
    n.kind === 'SubqueryTable' ||
    n.kind === 'Select' ||
    n.kind === 'Union' ||
    n.kind === 'Cte'
  );
}

/** Visit the expressions of one query level (not nested queries); lambda parameters are not columns. */
function walkLevel(
  root: AnyNode,
  visit: (n: AnyNode, lambdaParams: ReadonlySet<string>) => boolean | undefined,
): void {
  const go = (n: AnyNode, params: ReadonlySet<string>) => {
    if (visit(n, params) === false) return;
    const inner =
      n.kind === 'Lambda' ? new Set([...params, ...(n as unknown as { params: string[] }).params]) : params;
    for (const [k, v] of Object.entries(n)) {
      if (k === 'span') continue;
      forEachNode(v, (c) => {
        if (!isNestedQuery(c)) go(c, inner);
      });
    }
  };
  if (root.kind === 'Select') {
    for (const [k, v] of Object.entries(root)) {
      if (k === 'span' || k === 'with') continue;
      forEachNode(v, (c) => {
        if (!isNestedQuery(c)) go(c, new Set());
      });
    }
  } else go(root, new Set());
}

function forEachNode(v: unknown, f: (n: AnyNode) => void): void {
  if (Array.isArray(v)) for (const x of v) forEachNode(x, f);
  else if (isNode(v)) f(v);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) forEachNode(x, f);
}

/** Column references of one query level (a SELECT or an expression), lambda parameters excluded. */
export function referencedColumns(root: SelectQuery | Expr): Identifier[] {
  const out: Identifier[] = [];
  walkLevel(root, (n, params) => {
    if (n.kind === 'Identifier') {
      const id = n as Identifier;
      if (!(id.parts.length === 1 && params.has(id.parts[0] as string))) out.push(id);
    }
    // Table references in FROM are not columns; their expressions (ON, args) are visited.
    return undefined;
  });
  return out.filter((id) => !isTableArgument(root, id));
}

/** Identifiers that name streams inside FROM (table(s), tumble(s, ...)) rather than columns. */
function isTableArgument(root: SelectQuery | Expr, id: Identifier): boolean {
  if (root.kind !== 'Select' || !root.from) return false;
  let found = false;
  const check = (item: FromItem) => {
    if (item.kind === 'Join' || item.kind === 'ArrayJoin') {
      check(item.left);
      if (item.kind === 'Join') check(item.right);
    } else if (item.kind === 'TableFunction') {
      const first = item.args[0];
      const stack: Expr[] = first ? [first] : [];
      while (stack.length) {
        const e = stack.pop() as Expr;
        if (e === id) found = true;
        if (
          e.kind === 'Function' &&
          ['table', 'dedup', 'changelog', 'tumble', 'hop', 'session'].includes(e.name.toLowerCase()) &&
          e.args[0]
        )
          stack.push(e.args[0]);
      }
    }
  };
  check(root.from);
  return found;
}

/** Aggregate calls of one SELECT level (select list, HAVING, ORDER BY, ...), window functions (OVER) excluded. */
export function findAggregates(select: SelectQuery): FunctionCall[] {
  const out: FunctionCall[] = [];
  walkLevel(select, (n) => {
    if (n.kind === 'Function') {
      const f = n as FunctionCall;
      if (f.over === undefined && isAggregateName(f.name)) {
        out.push(f);
        return false;
      }
    }
    return undefined;
  });
  return out;
}

/** Is this SELECT an aggregation (aggregate calls or GROUP BY)? */
export function isAggregation(select: SelectQuery): boolean {
  return select.groupBy !== undefined || findAggregates(select).length > 0;
}

/** Streaming-only function calls anywhere in the tree, nested queries included. */
export function findStreamingFunctions(root: AnyNode): FunctionCall[] {
  const out: FunctionCall[] = [];
  walk(root, (n) => {
    if (n.kind === 'Function' && isStreamingOnlyFunction((n as FunctionCall).name))
      out.push(n as FunctionCall);
  });
  return out;
}

/** The leaf sources of a FROM tree, left to right. */
export function fromSources(from: FromItem | undefined): Exclude<FromItem, { kind: 'Join' | 'ArrayJoin' }>[] {
  if (!from) return [];
  if (from.kind === 'Join') return [...fromSources(from.left), ...fromSources(from.right)];
  if (from.kind === 'ArrayJoin') return fromSources(from.left);
  return [from];
}

/** Every SELECT of a query (union members and nested queries included), outermost first. */
export function allSelects(query: Query): SelectQuery[] {
  const out: SelectQuery[] = [];
  walk(query, (n) => {
    if (n.kind === 'Select') out.push(n as SelectQuery);
  });
  return out;
}

/** Split `a AND b AND c` into its conjuncts. */
export function conjuncts(e: Expr | undefined): Expr[] {
  if (!e) return [];
  if (e.kind === 'Binary' && e.op === 'AND') return [...conjuncts(e.left), ...conjuncts(e.right)];
  return [e];
}

/** Join conjuncts back with AND (undefined for none). */
export function andAll(list: readonly Expr[]): Expr | undefined {
  return list.reduce<Expr | undefined>(
    (acc, e) =>
      acc
        ? { kind: 'Binary', op: 'AND', left: acc, right: e, span: { start: acc.span.start, end: e.span.end } }
        : e,
    undefined,
  );
}
