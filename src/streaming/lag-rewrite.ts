import { err } from '../errors/tributary-error.ts';
import { isAggregation } from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr, FunctionCall } from '../sql/ast/expression.ts';
import type { FromItem, SelectQuery, WithItem } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { replace } from '../sql/ast/walk.ts';
import { substreamKey } from './substreams.ts';

/** The carried values of one `lag` argument, filled per batch: `__TRB_CARRY_<i>__`. */
export const carryMarker = (i: number) => `__TRB_CARRY_${i}__`;

/** One distinct lagged expression and the largest offset any call asks of it. */
export interface LaggedValue {
  readonly expr: Expr;
  readonly depth: number;
}

export interface LagRewrite {
  /** The tail query with lag/lags computed from window functions and the carried values. */
  readonly select: SelectQuery;
  /** Reads the last `depth` values of each lagged expression of a range (newest first), for the next batch. */
  readonly carry: SelectQuery;
  readonly values: readonly LaggedValue[];
  /**
   * With PARTITION BY, lag runs per substream: the carry query answers `__trb_key` first, and the
   * carried values are looked up by the row's substream key (see keyedCarryLiteral).
   */
  readonly keyed: boolean;
}

/** The substream key of a row, as the lag rewrite and its carry query compute it. */
export const LAG_KEY = '__trb_key';

function isLag(n: { kind: string }): n is FunctionCall {
  if (n.kind !== 'Function') return false;
  const name = (n as FunctionCall).name.toLowerCase();
  return name === 'lag' || name === 'lags' || backwardNeighbor(n as FunctionCall) !== undefined;
}

/**
 * `neighbor(x, -n[, default])` with a constant negative offset: in a streaming query Proton answers
 * it across blocks, the value n rows earlier, i.e. `lag(x, n[, default])`. Answers n, or undefined
 * for any other call (other offsets stay the engine's per-block function).
 */
function backwardNeighbor(f: FunctionCall): number | undefined {
  if (f.name.toLowerCase() !== 'neighbor') return undefined;
  const offset = f.args[1];
  if (offset?.kind !== 'Unary' || offset.op !== '-' || offset.operand.kind !== 'Number') return undefined;
  const n = Number(offset.operand.text);
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}

function constant(e: Expr | undefined, what: string): number {
  const v = e?.kind === 'Number' ? Number(e.text) : Number.NaN;
  if (!Number.isInteger(v) || v < 1)
    throw err('BAD_ARGUMENTS', { detail: `${what} must be a positive integer constant` });
  return v;
}

/**
 * `lag(x[, n=1[, default]])` and `lags(x, from, to[, default])` in a streaming tail
 * (streaming-sql-notes.md §1.11): the value of `x` n rows earlier among the rows that pass WHERE,
 * across batches. Within a batch the engine's `lagInFrame` gives it; for a batch's first n rows
 * the value comes from the carried array of the previous batches' last values (the type's default
 * before any). `neighbor(x, -n[, default])` is read as `lag(x, n[, default])` (backwardNeighbor).
 * Answers undefined when the query has no lag.
 */
export function rewriteLags(select: SelectQuery): LagRewrite | undefined {
  const values: { expr: Expr; depth: number }[] = [];
  const key = (e: Expr) => JSON.stringify(e, (k, v) => (k === 'span' ? undefined : v));
  const indexOf = (e: Expr, depth: number): number => {
    const i = values.findIndex((v) => key(v.expr) === key(e));
    if (i >= 0) {
      (values[i] as { depth: number }).depth = Math.max((values[i] as { depth: number }).depth, depth);
      return i;
    }
    return values.push({ expr: e, depth }) - 1;
  };
  const partition = select.partitionBy ?? [];
  const keyed = partition.length > 0;
  const window = {
    kind: 'WindowSpec' as const,
    partitionBy: partition,
    orderBy: [{ kind: 'OrderItem' as const, expr: ident('_tp_sn'), span: NO_SPAN }],
    frame: {
      units: 'ROWS' as const,
      start: { kind: 'UNBOUNDED PRECEDING' as const },
      end: { kind: 'CURRENT ROW' as const },
    },
    span: NO_SPAN,
  };
  const lagOf = (x: Expr, n: number, fallback: Expr | undefined, i: number): Expr => {
    const d = fallback ?? call('default_value_of_argument_type', x);
    // Row rn's value n rows back sits before the batch: counted from the carried array's end.
    const back: Expr = { kind: 'Binary', op: '-', left: ident('__trb_rn'), right: num(n + 1), span: NO_SPAN };
    const carried = call('array_element', ident(`__trb_carry_${i}`), back);
    const inBatch: FunctionCall = { ...call('lag_in_frame', x, num(n), d), over: window };
    const fromCarry: Expr = {
      kind: 'Function',
      name: 'cast',
      args: [call('if_null', carried, d), call('to_type_name', x)],
      distinct: false,
      span: NO_SPAN,
    };
    return call(
      'if',
      { kind: 'Binary', op: '>', left: ident('__trb_rn'), right: num(n), span: NO_SPAN },
      inBatch,
      fromCarry,
    );
  };
  let found = false;
  const rewrite = (e: Expr): Expr =>
    replace(e, (n) => {
      if (!isLag(n)) return undefined;
      found = true;
      const [x, a, b, d] = n.args;
      if (!x) throw err('BAD_ARGUMENTS', { detail: `${n.name}() needs an argument` });
      const neighborOffset = backwardNeighbor(n);
      if (neighborOffset !== undefined) return lagOf(x, neighborOffset, b, indexOf(x, neighborOffset));
      if (n.name.toLowerCase() === 'lag') {
        const offset = a ? constant(a, 'lag() offset') : 1;
        return lagOf(x, offset, b, indexOf(x, offset));
      }
      const from = constant(a, 'lags() from');
      const to = constant(b, 'lags() to');
      if (to < from)
        throw err('BAD_ARGUMENTS', { detail: 'lags(x, from, to): to must not be less than from' });
      const i = indexOf(x, to);
      const items: Expr[] = [];
      for (let k = from; k <= to; k++) items.push(lagOf(x, k, d, i));
      return { kind: 'Array', elements: items, span: NO_SPAN };
    }) as Expr;
  const columns = select.columns.map(rewrite);
  if (!found) return undefined;
  if (select.from?.kind === 'Join' || select.from?.kind === 'ArrayJoin') {
    throw err('NOT_IMPLEMENTED', { detail: 'lag() over a join is not supported in streaming queries' });
  }
  // Inner: the rows that pass WHERE, numbered in ingest order, with the carried arrays.
  const from = select.from ? carrySn(select.from, select.with) : undefined;
  const inner: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: [
      { kind: 'Asterisk', span: NO_SPAN },
      ident('_tp_sn'),
      {
        kind: 'Alias',
        expr: { ...call('row_number'), over: { ...window, frame: undefined } } as Expr,
        alias: '__trb_rn',
        span: NO_SPAN,
      },
      ...(keyed
        ? [{ kind: 'Alias', expr: substreamKey(partition), alias: LAG_KEY, span: NO_SPAN } as Expr]
        : []),
      ...values.map(
        (_, i): Expr => ({
          kind: 'Alias',
          expr: num(carryMarker(i)),
          alias: `__trb_carry_${i}`,
          span: NO_SPAN,
        }),
      ),
    ],
    ...(from ? { from } : {}),
    ...(select.where ? { where: select.where } : {}),
    span: NO_SPAN,
  };
  const { where: _w, from: _f, partitionBy: _p, ...rest } = select;
  const outer: SelectQuery = {
    ...rest,
    columns,
    from: { kind: 'SubqueryTable', query: inner, alias: '__trb_lag', span: NO_SPAN },
    orderBy: select.orderBy ?? [{ kind: 'OrderItem', expr: ident('_tp_sn'), span: NO_SPAN }],
  };
  const depth = Math.max(...values.map((v) => v.depth));
  const carry: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: [
      ...(keyed
        ? [{ kind: 'Alias', expr: substreamKey(partition), alias: LAG_KEY, span: NO_SPAN } as Expr]
        : []),
      ...values.map((v, i): Expr => ({ kind: 'Alias', expr: v.expr, alias: `__trb_v${i}`, span: NO_SPAN })),
    ],
    ...(from ? { from } : {}),
    ...(select.where ? { where: select.where } : {}),
    orderBy: [{ kind: 'OrderItem', expr: ident('_tp_sn'), direction: 'DESC', span: NO_SPAN }],
    ...(keyed
      ? { limitBy: { kind: 'LimitBy', limit: num(depth), by: [ident(LAG_KEY)], span: NO_SPAN } }
      : { limit: { kind: 'Limit', limit: num(depth), withTies: false, span: NO_SPAN } }),
    span: NO_SPAN,
  };
  return { select: outer, carry, values, keyed };
}

/**
 * Rows are ordered by `_tp_sn`: a FROM subquery that only filters and projects (`SELECT a, b FROM
 * (SELECT ... FROM s WHERE ...)`) passes it on, at every level, so lag() can order by it.
 */
function carrySn(item: FromItem, ctes?: readonly WithItem[]): FromItem {
  const from = inlineCte(item, ctes);
  if (from.kind !== 'SubqueryTable' || from.query.kind !== 'Select') return from;
  const q = from.query;
  if (isAggregation(q) || q.distinct || q.limit || q.limitBy || q.from?.kind === 'Join') return from;
  const named = q.columns.some(
    (c) =>
      (c.kind === 'Identifier' && c.parts.at(-1) === '_tp_sn') ||
      (c.kind === 'Alias' && c.alias === '_tp_sn'),
  );
  const query: SelectQuery = {
    ...q,
    columns: named ? q.columns : [...q.columns, ident('_tp_sn')],
    ...(q.from ? { from: carrySn(q.from, q.with) } : {}),
  };
  return { ...from, query };
}

/**
 * A CTE read in FROM (`WITH c AS (SELECT a FROM s) SELECT lag(a) FROM c`) as the subquery it
 * names, so `_tp_sn` can be passed on through it as through any subquery (0013_changelog_stream7
 * ids 41, 44).
 */
function inlineCte(from: FromItem, ctes: readonly WithItem[] | undefined): FromItem {
  if (from.kind !== 'Table' || from.database !== undefined) return from;
  const cte = ctes?.find(
    (w): w is Extract<WithItem, { kind: 'Cte' }> => w.kind === 'Cte' && w.name === from.name,
  );
  if (cte?.query.kind !== 'Select') return from;
  return { kind: 'SubqueryTable', query: cte.query, alias: from.alias ?? from.name, span: from.span };
}

/** A JSON value as an engine literal. */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  return `'${JSON.stringify(v).replace(/'/g, "\\'")}'`;
}

/**
 * The carried values of lagged expression `i` as an array literal, oldest first, `depth` long:
 * positions before the first row ever seen are NULL (the default applies).
 */
export function carryLiteral(newestFirst: readonly unknown[], depth: number): string {
  const oldestFirst = [...newestFirst].reverse();
  const padded = [
    ...Array.from({ length: Math.max(0, depth - oldestFirst.length) }, () => null),
    ...oldestFirst.slice(-depth),
  ];
  return `[${padded.map(literal).join(', ')}]`;
}

/**
 * The carried values of lagged expression `i` per substream, as an engine expression of the row's
 * `__trb_key`: that substream's array (as carryLiteral), or all NULLs for a substream not seen yet.
 */
export function keyedCarryLiteral(
  newestFirstByKey: ReadonlyMap<string, readonly unknown[]>,
  depth: number,
): string {
  const none = carryLiteral([], depth);
  if (newestFirstByKey.size === 0) return none;
  const keys = [...newestFirstByKey.keys()];
  const arrays = keys.map((k) => carryLiteral(newestFirstByKey.get(k) ?? [], depth));
  const keyList = `[${keys.map((k) => literal(k)).join(', ')}]`;
  return `if(indexOf(${keyList}, ${LAG_KEY}) = 0, ${none}, arrayElement([${arrays.join(', ')}], indexOf(${keyList}, ${LAG_KEY})))`;
}
