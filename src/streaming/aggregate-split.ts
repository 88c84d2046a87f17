import { err } from '../errors/tributary-error.ts';
import { alias, call as callOf, ident, num } from '../sql/ast/build.ts';
import { sameTree } from '../sql/ast/compare.ts';
import type { Expr, FunctionCall, Identifier, OrderItem } from '../sql/ast/expression.ts';
import type { SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { mapFunctionCall } from '../sql/names/function-calls.ts';
import { isAggregateName } from '../sql/names/function-catalog.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';
import { UDA_DELTAS } from '../udf/uda-deltas.ts';
import { checkRetractable, isNestedOnlyRetractable, retractableBase } from './retraction.ts';

/** The table name the emit query reads from; the executor substitutes the real state table. */
export const STATE_TABLE = '__trb_state';

/**
 * A streaming aggregation split into the two queries the executor runs (DESIGN.md §5):
 * - `fold` reads a range of new rows and produces one row of partial aggregate states per group
 *   (`-State` combinators), appended to the query's state table;
 * - `emit` reads the state table and merges the partial states of each group (`-Merge`),
 *   producing the rows the user asked for (with HAVING, ORDER BY and LIMIT BY applied per emit).
 */
export interface AggregateSplit {
  readonly fold: SelectQuery;
  readonly emit: SelectQuery;
  /** State-table columns holding the group keys, in order (`__k0`, ...). */
  readonly keyColumns: readonly string[];
  /** State-table columns holding the partial states (`__a0`, ...). */
  readonly stateColumns: readonly string[];
  /** State-table columns of `window_start` / `window_end` when the query groups by a window. */
  readonly windowStart?: string;
  readonly windowEnd?: string;
  /** State-table columns of the substream (PARTITION BY) keys, in order. */
  readonly partitionColumns: readonly string[];
  /**
   * Retracting aggregations (retraction.ts): the state-table columns holding the aggregates'
   * argument values (`__x0`, ...); the state holds `(keys, args, __d)` with `__d` the net count.
   */
  readonly argumentColumns?: readonly string[];
  /**
   * Retracting, every aggregate reads the tuples weighted by their net count `__n` (count forms
   * sum it; min, max, arg_min/arg_max, group_uniq_array and the distinct forms ignore it), so an
   * emit needs no repetition of the tuples (retracting-input.ts).
   */
  readonly weighted?: boolean;
  /**
   * Retracting, the emit keeps the tuples whose net count is not positive, flagged `__live = 0`,
   * and every aggregate leaves them out (its `_if` form): a group with no live tuple is still
   * emitted, with the aggregates of no rows.
   */
  readonly keepsEmpty?: boolean;
  /**
   * Retracting, a `group_array` over a nested aggregation orders its values as the inner query
   * emitted them: the state keeps each tuple's latest input `_tp_sn` (LATEST_SN_STATE) and the
   * emit reads it as LATEST_SN.
   */
  readonly sequenced?: boolean;
}

/** The emit column of a retracting aggregation flagging live tuples (net count > 0). */
export const LIVE = '__live';

/** The state column of a retracting aggregation's net count of a `(keys, args)` tuple. */
export const NET_COUNT = '__d';

/** The state column of a sequenced retracting aggregation: a tuple's latest input `_tp_sn`. */
export const LATEST_SN_STATE = '__s';

/** The emit column of a sequenced retracting aggregation: a tuple's latest input `_tp_sn`. */
export const LATEST_SN = '__sn';

export interface SplitOptions {
  /** The FROM is a window function. */
  readonly window: boolean;
  /**
   * The input is a changelog (rows carry `_tp_delta`): the fold keeps the net multiset of each
   * group's argument tuples and the emit computes the aggregates over it. The string names the
   * input in the refusal of an aggregate that cannot retract.
   */
  readonly retract?: string;
}

function isAggregateCall(n: AnyNode): n is FunctionCall {
  return (
    n.kind === 'Function' &&
    (n as FunctionCall).over === undefined &&
    isAggregateName((n as FunctionCall).name)
  );
}

/** `f(DISTINCT x)` as the `_distinct` combinator; `count(*)` as `count()`. */
function normalizeAggregate(call: FunctionCall): FunctionCall {
  let c = call;
  if (c.args.length === 1 && c.args[0]?.kind === 'Asterisk') c = { ...c, args: [] };
  if (c.distinct) {
    const name = c.name.toLowerCase() === 'count' ? 'count_distinct' : `${c.name}_distinct`;
    c = { ...c, name, distinct: false };
  }
  return c;
}

function lastPart(e: Expr): string | undefined {
  return e.kind === 'Identifier' ? e.parts[e.parts.length - 1] : undefined;
}

/** Split a streaming aggregation (see AggregateSplit). */
export function splitAggregation(select: SelectQuery, options: SplitOptions): AggregateSplit {
  const aliases = new Map<string, Expr>();
  for (const c of select.columns) if (c.kind === 'Alias') aliases.set(c.alias, c.expr);

  // Group keys: GROUP BY items, a bare alias meaning the aliased select expression.
  const keys: Expr[] = [];
  for (const g of select.groupBy?.items ?? []) {
    const target =
      g.kind === 'Identifier' && g.parts.length === 1 ? aliases.get(g.parts[0] as string) : undefined;
    const key = target && !findAggregateIn(target) ? target : g;
    if (!keys.some((k) => sameTree(k, key))) keys.push(key);
  }
  // PARTITION BY (substreams) aggregates independently per partition key: one more group key each.
  for (const p of select.partitionBy ?? []) if (!keys.some((k) => sameTree(k, p))) keys.push(p);

  let windowStart: number | undefined;
  let windowEnd: number | undefined;
  if (options.window) {
    windowStart = keys.findIndex((k) => lastPart(k) === 'window_start');
    windowEnd = keys.findIndex((k) => lastPart(k) === 'window_end');
    if (windowStart < 0 && windowEnd < 0) {
      throw err('WINDOW_COLUMN_NOT_REFERENCED', {
        detail: 'A streaming window aggregation must group by window_start or window_end',
      });
    }
    // Keep both bounds in the state: each is a function of the other, so grouping is unchanged.
    if (windowStart < 0) windowStart = keys.push(ident('window_start')) - 1;
    if (windowEnd < 0) windowEnd = keys.push(ident('window_end')) - 1;
  }
  const keyColumns = keys.map((_, i) => `__k${i}`);

  // Aggregate calls, deduplicated: each gets one state column.
  const aggregates: FunctionCall[] = [];
  const stateOf = (call: FunctionCall): number => {
    const found = aggregates.findIndex((a) => sameTree(a, call));
    return found >= 0 ? found : aggregates.push(call) - 1;
  };

  // Retracting: the non-constant arguments of the aggregates, deduplicated: each gets one column.
  const args: Expr[] = [];
  const argumentColumn = (arg: Expr): string => {
    const found = args.findIndex((a) => sameTree(a, arg));
    return `__x${found >= 0 ? found : args.push(arg) - 1}`;
  };
  const weighted = options.retract !== undefined && aggregatesOf(select).every(isWeightable);
  // A group whose rows are all retracted is still emitted, with the aggregates of no rows (Proton:
  // count 0, avg nan), when every aggregate has an `_if` form to leave out the dead tuples.
  const keepsEmpty = options.retract !== undefined && aggregatesOf(select).every(hasIfForm);
  const live = ident(LIVE);
  const onlyLive = (c: FunctionCall): FunctionCall => {
    if (!keepsEmpty) return c;
    if (/if$/i.test(c.name)) {
      const cond = c.args.at(-1) as Expr;
      return { ...c, args: [...c.args.slice(0, -1), callOf('and', cond, live)] };
    }
    return { ...c, name: /[A-Z]/.test(c.name) ? `${c.name}If` : `${c.name}_if`, args: [...c.args, live] };
  };
  let sequenced = false;
  const retractCall = (call: FunctionCall): Expr => {
    checkRetractable(call, options.retract as string);
    const c = normalizeAggregate(call);
    const rewritten: FunctionCall = onlyLive({
      ...c,
      args: c.args.map((a) => (isConstant(a) ? a : ident(argumentColumn(a)))),
      span: NO_SPAN,
    });
    if (weighted && retractableBase(c.name) === 'count' && !/distinct/i.test(c.name)) {
      // count(): the net counts summed; count(x) those of non-NULL x; count_if(c) those where c holds.
      const data = c.args.filter((a) => !isConstant(a)).map((a) => ident(argumentColumn(a)));
      const [first] = data;
      const zero: Expr = { kind: 'Number', text: '0', span: NO_SPAN };
      const n = keepsEmpty ? callOf('if', live, ident('__n'), zero) : ident('__n');
      const counted = !first
        ? n
        : /if$/i.test(c.name)
          ? callOf('if', first, n, { kind: 'Number', text: '0', span: NO_SPAN })
          : callOf('if', callOf('is_null', first), { kind: 'Number', text: '0', span: NO_SPAN }, n);
      return callOf('to_uint64', callOf('sum', counted));
    }
    // Proton's group_uniq_array over a changelog answers its values in order (0013 id 109).
    if (retractableBase(c.name) === 'group_uniq_array') return callOf('array_sort', rewritten);
    // group_array over a nested aggregation's live rows: each value with the row's latest input
    // `_tp_sn` and its arguments (ARGUMENTS_KEY, all of them once known), sorted by them: the order
    // the inner query emitted its current rows in, the same for every array so that they stay aligned.
    if (isNestedOnlyRetractable(c.name) && rewritten.args.length === 1) {
      sequenced = true;
      const key: Expr = {
        kind: 'Tuple',
        elements: [ident(LATEST_SN), ident(ARGUMENTS_KEY)],
        span: NO_SPAN,
      };
      const pairs = callOf(
        rewritten.name === c.name ? 'group_array' : 'group_array_if',
        { kind: 'Tuple', elements: [key, rewritten.args[0] as Expr], span: NO_SPAN },
        ...rewritten.args.slice(1),
      );
      return callOf('array_map', lambdaSecond, callOf('array_sort', pairs));
    }
    // avg of no rows: the engine's 0/0 is a negative NaN (`-nan`); Proton answers `nan`.
    if (keepsEmpty && retractableBase(c.name) === 'avg') {
      const nan = callOf('to_float64', { kind: 'String', value: 'nan', span: NO_SPAN });
      return callOf('if', callOf('is_nan', rewritten), nan, rewritten);
    }
    return rewritten;
  };

  const rewrite = (e: Expr, visible: ReadonlyMap<string, Expr>): Expr => {
    const out = replace(e, (n) => {
      const i = keys.findIndex((k) => sameTree(k, n));
      if (i >= 0) return ident(keyColumns[i] as string);
      const q = qualifiedKeyOf(n, keys, visible);
      if (q >= 0) return ident(keyColumns[q] as string);
      if (isAggregateCall(n)) return options.retract ? retractCall(n) : mergeCall(n, stateOf(n));
      // A JavaScript aggregate over a changelog gets the deltas of its live rows, each +1 (udf-engine-files.ts).
      if (options.retract && n.kind === 'Function' && (n as FunctionCall).name === UDA_DELTAS)
        return retractCall(
          callOf('__trb_uda_values', callOf('to_int8', { kind: 'Number', text: '1', span: NO_SPAN })),
        );
      return undefined;
    }) as Expr;
    checkGrouped(out, keyColumns, visible);
    return out;
  };

  // A select item may name another item's alias (`group_array(x) AS xs, length(xs)`), as the engine
  // allows; never its own.
  const othersOf = (own: string): Map<string, Expr> => {
    const others = new Map(aliases);
    others.delete(own);
    return others;
  };
  const columns = select.columns.map((c): Expr => {
    if (c.kind === 'Alias') return { ...c, expr: rewrite(c.expr, othersOf(c.alias)) };
    if (c.kind === 'Asterisk' || c.kind === 'Columns') {
      throw err('NOT_AN_AGGREGATE', {
        detail: `${protonColumnName(c)} is not under an aggregate function and not in GROUP BY`,
      });
    }
    const out = rewrite(c, aliases);
    return sameTree(out, c) ? out : alias(out, protonColumnName(c));
  });
  const rewrittenHaving = select.having ? rewrite(select.having, aliases) : undefined;
  const rewrittenOrderBy = select.orderBy?.map((o): OrderItem => ({ ...o, expr: rewrite(o.expr, aliases) }));
  const rewrittenLimitBy = select.limitBy
    ? { ...select.limitBy, by: select.limitBy.by.map((b) => rewrite(b, aliases)) }
    : undefined;
  // ARGUMENTS_KEY (group_array over a nested aggregation): the tuple of every argument column.
  const argumentsKey: Expr = {
    kind: 'Tuple',
    elements: args.map((_, i) => ident(`__x${i}`)),
    span: NO_SPAN,
  };
  const withKey = <T extends AnyNode>(e: T): T =>
    replace(e, (n) =>
      n.kind === 'Identifier' && (n as Identifier).parts.join('.') === ARGUMENTS_KEY
        ? argumentsKey
        : undefined,
    ) as T;
  columns.splice(0, columns.length, ...columns.map(withKey));
  const having = rewrittenHaving ? withKey(rewrittenHaving) : undefined;
  const orderBy = rewrittenOrderBy?.map((o) => ({ ...o, expr: withKey(o.expr) }));
  const limitBy = rewrittenLimitBy
    ? { ...rewrittenLimitBy, by: rewrittenLimitBy.by.map((b) => withKey(b)) }
    : undefined;

  const stateColumns = aggregates.map((_, i) => `__a${i}`);
  const argumentColumns = args.map((_, i) => `__x${i}`);
  const foldKeys = [...keyColumns, ...argumentColumns];
  const fold: SelectQuery = {
    kind: 'Select',
    distinct: false,
    ...(select.with ? { with: select.with } : {}),
    columns: [
      ...keys.map((k, i) => alias(k, keyColumns[i] as string)),
      ...aggregates.map((a, i) => alias(stateCall(a), stateColumns[i] as string)),
      ...args.map((a, i) => alias(a, argumentColumns[i] as string)),
      ...(options.retract ? [alias(callOf('sum', ident('_tp_delta')), NET_COUNT)] : []),
      ...(sequenced ? [alias(callOf('max', ident('_tp_sn')), LATEST_SN_STATE)] : []),
    ],
    ...(select.from ? { from: select.from } : {}),
    ...(select.prewhere ? { prewhere: select.prewhere } : {}),
    ...(select.where ? { where: select.where } : {}),
    ...(foldKeys.length
      ? {
          groupBy: {
            kind: 'GroupBy',
            items: foldKeys.map((k) => ident(k)),
            withTotals: false,
            span: NO_SPAN,
          },
        }
      : {}),
    span: NO_SPAN,
  };
  const emit: SelectQuery = {
    kind: 'Select',
    distinct: select.distinct,
    columns,
    from: { kind: 'Table', name: STATE_TABLE, span: NO_SPAN },
    ...(keys.length
      ? {
          groupBy: {
            kind: 'GroupBy',
            items: keyColumns.map((k) => ident(k)),
            withTotals: false,
            span: NO_SPAN,
          },
        }
      : {}),
    ...(having ? { having } : {}),
    ...(orderBy ? { orderBy } : {}),
    ...(limitBy ? { limitBy } : {}),
    span: NO_SPAN,
  };
  const partitionColumns = (select.partitionBy ?? []).map(
    (p) => keyColumns[keys.findIndex((k) => sameTree(k, p))] as string,
  );
  return {
    fold,
    emit,
    keyColumns,
    stateColumns,
    partitionColumns,
    ...(options.retract ? { argumentColumns, weighted, keepsEmpty, sequenced } : {}),
    ...(windowStart !== undefined ? { windowStart: keyColumns[windowStart] } : {}),
    ...(windowEnd !== undefined ? { windowEnd: keyColumns[windowEnd] } : {}),
  };
}

/** The aggregate calls of a SELECT's own level (its items, HAVING, ORDER BY, LIMIT BY). */
function aggregatesOf(select: SelectQuery): FunctionCall[] {
  const found: FunctionCall[] = [];
  const visit = (e: Expr) =>
    replace(e, (n) => {
      if (n.kind === 'Subquery') return n;
      if (isAggregateCall(n)) {
        found.push(n);
        return n;
      }
      return undefined;
    });
  for (const c of select.columns) visit(c);
  if (select.having) visit(select.having);
  for (const o of select.orderBy ?? []) visit(o.expr);
  for (const b of select.limitBy?.by ?? []) visit(b);
  return found;
}

/** Stands for the tuple of all argument columns until they are all known (see withKey). */
const ARGUMENTS_KEY = '__trb_args_key';

/** `__p -> __p.2`: the value of a (key, value) pair. */
const lambdaSecond: Expr = {
  kind: 'Lambda',
  params: ['__p'],
  body: callOf('tuple_element', ident('__p'), num(2)),
  span: NO_SPAN,
};

/** Does an aggregate read weighted tuples right: a count form, or one that ignores multiplicity? */
function isWeightable(call: FunctionCall): boolean {
  const c = normalizeAggregate(call);
  if (/distinct/i.test(c.name)) return true;
  const base = retractableBase(c.name);
  return (
    base !== undefined && ['count', 'min', 'max', 'arg_min', 'arg_max', 'group_uniq_array'].includes(base)
  );
}

/** Does an aggregate have an `_if` form that can leave out dead tuples (not min_k/max_k, not distinct)? */
function hasIfForm(call: FunctionCall): boolean {
  const c = normalizeAggregate(call);
  if (/distinct/i.test(c.name)) return false;
  const base = retractableBase(c.name);
  return (
    base !== undefined &&
    ['count', 'sum', 'avg', 'min', 'max', 'arg_min', 'arg_max', 'group_uniq_array'].includes(base)
  );
}

/** A literal argument (`3` of `min_k(x, 3)`) stays in the call; any other is kept in the state. */
function isConstant(e: Expr): boolean {
  if (e.kind === 'Number' || e.kind === 'String' || e.kind === 'Null' || e.kind === 'Bool') return true;
  if (e.kind === 'Unary') return isConstant((e as unknown as { operand: Expr }).operand);
  return false;
}

function findAggregateIn(e: Expr): boolean {
  let found = false;
  replace(e, (n) => {
    if (isAggregateCall(n)) found = true;
    return found ? n : undefined;
  });
  return found;
}

/** `sum(x)` -> `sum_state(x)`; `quantile(x, 0.9)` -> `quantile_state(x, 0.9)`. */
function stateCall(call: FunctionCall): FunctionCall {
  const c = normalizeAggregate(call);
  return { ...c, name: `${c.name}_state`, span: NO_SPAN };
}

/** `sum(x)` -> `sum_merge(__a0)`; trailing parameters stay: `quantile_merge(__a0, 0.9)`. */
function mergeCall(call: FunctionCall, index: number): FunctionCall {
  const c = normalizeAggregate(call);
  const mapped = mapFunctionCall(c);
  const lower = c.name.toLowerCase();
  // min_k/max_k(x, k, context...): the merge needs k only (the state holds x with its context).
  // xirr(value, date[, guess]): the merge needs the guess only.
  // max_k with context: a third argument tells its merge that the state holds tuples (ties).
  const trailing =
    lower === 'min_k' || lower === 'max_k'
      ? lower === 'max_k' && c.args.length > 2
        ? [...c.args.slice(1, 2), num(1)]
        : c.args.slice(1, 2)
      : lower === 'xirr'
        ? c.args.slice(2)
        : c.args.slice(mapped.kind === 'call' && !c.params ? dataArgCount(mapped.call) : c.args.length);
  return {
    kind: 'Function',
    name: `${c.name}_merge`,
    args: [ident(`__a${index}`), ...trailing],
    distinct: false,
    ...(c.params ? { params: c.params } : {}),
    span: NO_SPAN,
  };
}

/** Data arguments of a mapped aggregate (the inner aggregate's when the mapping wraps it). */
function dataArgCount(call: FunctionCall): number {
  if (call.name === 'arrayMap') {
    const inner = call.args[1];
    if (inner?.kind === 'Function') return inner.args.length;
  }
  return call.args.length;
}

/**
 * `id` in a select list grouped by `a.id` (a join `... AS a JOIN ... AS b ON a.id = b.id`): the
 * one key that is a qualified column of that name, as Proton resolves it (0018_query_state4_join
 * id 86); -1 when none or several are, or when `id` is a select alias.
 */
function qualifiedKeyOf(
  n: { kind: string },
  keys: readonly Expr[],
  aliases: ReadonlyMap<string, Expr>,
): number {
  if (n.kind !== 'Identifier') return -1;
  const parts = (n as Identifier).parts;
  if (parts.length !== 1 || aliases.has(parts[0] as string)) return -1;
  const matches = keys.flatMap((k, i) =>
    k.kind === 'Identifier' && k.parts.length === 2 && k.parts[1] === parts[0] ? [i] : [],
  );
  return matches.length === 1 ? (matches[0] as number) : -1;
}

/**
 * After rewriting, a column reference that is neither a group key nor inside an aggregate is an
 * error (NOT_AN_AGGREGATE, code 215, as the engine and Proton answer); ORDER BY and HAVING may
 * also name select aliases.
 */
function checkGrouped(e: Expr, keyColumns: readonly string[], aliases: ReadonlyMap<string, Expr>): void {
  const lambdaParams: string[] = [];
  replace(e, (n) => {
    if (n.kind === 'Lambda') {
      lambdaParams.push(...(n as unknown as { params: string[] }).params);
      return undefined;
    }
    if (n.kind === 'Subquery') return n;
    // Merged states and (retracting) aggregates over argument columns are resolved already.
    if (n.kind === 'Function' && (/_merge$/.test((n as FunctionCall).name) || isAggregateCall(n))) return n;
    if (n.kind !== 'Identifier') return undefined;
    const id = n as Identifier;
    const name = id.parts.join('.');
    if (
      keyColumns.includes(name) ||
      lambdaParams.includes(name) ||
      (id.parts.length === 1 && aliases.has(name))
    )
      return n;
    throw err('NOT_AN_AGGREGATE', {
      detail: `Column ${name} is not under an aggregate function and not in GROUP BY`,
    });
  });
}
