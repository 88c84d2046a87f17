import type { Expr, FunctionCall } from '../ast/expression.ts';
import {
  isStreamingOnlyFunction,
  type ResolvedFunction,
  resolveFunctionName,
  suggestFunctionName,
} from './function-catalog.ts';
import { PARAMETRIC_AGGREGATES } from './function-exceptions.ts';
import { mapProtonOnlyCall, unsupportedProtonFunction } from './proton-only-functions.ts';

/**
 * A Proton call mapped to the engine: the same call with the ClickHouse name and, for parametric
 * aggregates, the trailing arguments moved to `params` (`quantile(x, 0.9)` -> `quantile(0.9)(x)`).
 * Arguments stay Proton expressions; the translator translates them in turn.
 */
export type CallMapping =
  | { readonly kind: 'call'; readonly call: FunctionCall; readonly aggregate: boolean }
  /** A streaming-only function (lag, emit_version, date_diff_within, ...): the planner's business. */
  | { readonly kind: 'streaming'; readonly name: string }
  | { readonly kind: 'unknown'; readonly name: string; readonly suggestion?: string }
  /** A Proton function Tributary does not support, with the reason (proton-only-functions.ts). */
  | { readonly kind: 'unsupported'; readonly name: string; readonly reason: string };

/** Look-up for functions the static catalogue cannot know (user-defined functions). */
export type ExtraFunctions = (
  name: string,
) => { readonly clickhouse: string; readonly aggregate?: boolean } | undefined;

const num = (text: string, at: FunctionCall): Expr => ({ kind: 'Number', text, span: at.span });
const str = (value: string, at: FunctionCall): Expr => ({ kind: 'String', value, span: at.span });
const fn = (
  name: string,
  args: readonly Expr[],
  at: FunctionCall,
  params?: readonly Expr[],
): FunctionCall => ({
  kind: 'Function',
  name,
  args,
  distinct: false,
  ...(params ? { params } : {}),
  span: at.span,
});

/** Extra leading arguments each combinator adds (If: the condition; ArgMin/ArgMax: the key). */
const COMBINATOR_ARGS: Record<string, number> = { If: 1, ArgMin: 1, ArgMax: 1 };

function isFalse(e: Expr | undefined): boolean {
  return (
    e !== undefined && ((e.kind === 'Bool' && !e.value) || (e.kind === 'Number' && Number(e.text) === 0))
  );
}

/** Split trailing parameters off for parametric aggregates. */
function parametric(
  resolved: ResolvedFunction,
  call: FunctionCall,
): { args: readonly Expr[]; params?: readonly Expr[] } {
  if (call.params) return { args: call.args, params: call.params };
  const rule = Object.hasOwn(PARAMETRIC_AGGREGATES, resolved.base)
    ? PARAMETRIC_AGGREGATES[resolved.base]
    : undefined;
  if (!rule) return { args: call.args };
  if ('paramsFirst' in rule) {
    if (call.args.length <= rule.paramsFirst) return { args: call.args };
    return { params: call.args.slice(0, rule.paramsFirst), args: call.args.slice(rule.paramsFirst) };
  }
  const leading =
    rule.args +
    resolved.combinators.reduce(
      (n, c) => n + (Object.hasOwn(COMBINATOR_ARGS, c) ? (COMBINATOR_ARGS[c] as number) : 0),
      0,
    );
  if (call.args.length <= leading) return { args: call.args };
  return { args: call.args.slice(0, leading), params: call.args.slice(leading) };
}

/** Proton aggregates without a ClickHouse counterpart of the same shape. */
function special(lower: string, call: FunctionCall, combinators: string): CallMapping | undefined {
  const a = call.args;
  const plain = combinators === '';
  switch (lower) {
    case 'p90':
    case 'p95':
    case 'p99':
      return {
        kind: 'call',
        call: fn(`quantile${combinators}`, a, call, [num(String(Number(lower.slice(1)) / 100), call)]),
        aggregate: true,
      };
    case 'top_k':
    case 'top_k_exact':
    case 'top_k_weighted':
    case 'top_k_exact_weighted': {
      // top_k(x, k[, with_count = true[, load_factor | memory_limit]]) -> topK(k[, load_factor][, 'counts'])(x)
      const weighted = lower.endsWith('_weighted');
      const lead = weighted ? 2 : 1;
      const [k, withCount, factor] = a.slice(lead);
      const params: Expr[] = [k ?? num('10', call)];
      // with_count defaults to true in Proton: top_k(x, k) answers (item, count) pairs.
      const counts = withCount === undefined || !isFalse(withCount);
      if (counts || (factor && !lower.includes('exact')))
        params.push(factor && !lower.includes('exact') ? factor : num('3', call));
      if (counts) params.push(str('counts', call));
      const topK = fn(`${weighted ? 'topKWeighted' : 'topK'}${combinators}`, a.slice(0, lead), call, params);
      // With counts the engine answers (item, count, error); Proton answers (item, count).
      const pairs = counts && (plain || combinators === 'Merge' || combinators === 'If');
      if (!pairs) return { kind: 'call', call: topK, aggregate: true };
      const t: Expr = { kind: 'Identifier', parts: ['__t'], span: call.span };
      const pair = fn(
        'tuple',
        [fn('tupleElement', [t, num('1', call)], call), fn('tupleElement', [t, num('2', call)], call)],
        call,
      );
      return {
        kind: 'call',
        call: fn('arrayMap', [{ kind: 'Lambda', params: ['__t'], body: pair, span: call.span }, topK], call),
        aggregate: true,
      };
    }
    case 'min_k':
    case 'max_k': {
      // min_k(x, k[, context...]): the k smallest x (with their context columns, as tuples).
      // With -State / -Merge (streaming aggregation) the same split holds: the state is the
      // inner aggregate's, and max_k's sort and slice apply after the merge.
      if (!plain && combinators !== 'State' && combinators !== 'Merge') return undefined;
      const [x, k, ...context] = a;
      if (!x || !k) return undefined;
      const value: Expr =
        context.length && combinators !== 'Merge'
          ? { kind: 'Tuple', elements: [x, ...context], span: call.span }
          : x;
      if (lower === 'min_k')
        return {
          kind: 'call',
          call: fn(`groupArraySorted${combinators}`, [value], call, [k]),
          aggregate: true,
        };
      if (combinators === 'State')
        return { kind: 'call', call: fn('groupArrayState', [value], call), aggregate: true };
      const collected = fn(combinators === 'Merge' ? 'groupArrayMerge' : 'groupArray', [value], call);
      // With -Merge, an argument after k only says the state holds (x, context...) tuples.
      const sorted = context.length
        ? largestFirstTiesByContext(collected, call)
        : fn('arrayReverseSort', [collected], call);
      return { kind: 'call', call: fn('arraySlice', [sorted, num('1', call), k], call), aggregate: true };
    }
    case 'xirr': {
      // xirr(value, date[, guess]): Proton's aggregate, the internal rate of return of the rows'
      // cash flows at their dates: the engine's scalar over the (value, date) pairs collected.
      // With -State / -Merge (streaming aggregation) the state is the pairs' groupArray.
      if (!plain && combinators !== 'State' && combinators !== 'Merge') return undefined;
      const merge = combinators === 'Merge';
      const [x, d, guess] = merge ? [a[0], undefined, a[1]] : a;
      if (!x || (!merge && !d) || a.length > (merge ? 2 : 3)) return undefined;
      // The array form xirr([flows], [dates]) of earlier releases stays the engine's scalar.
      if (plain && x.kind === 'Array') return undefined;
      const pair: Expr = merge ? x : { kind: 'Tuple', elements: [x, d as Expr], span: call.span };
      if (combinators === 'State')
        return { kind: 'call', call: fn('groupArrayState', [pair], call), aggregate: true };
      const collected = fn(merge ? 'groupArrayMerge' : 'groupArray', [pair], call);
      const element = (i: string) =>
        fn(
          'arrayMap',
          [
            {
              kind: 'Lambda',
              params: ['__xirr'],
              body: fn(
                'tupleElement',
                [{ kind: 'Identifier', parts: ['__xirr'], span: call.span }, num(i, call)],
                call,
              ),
              span: call.span,
            },
            collected,
          ],
          call,
        );
      return {
        kind: 'call',
        call: fn(
          'financialInternalRateOfReturnExtended',
          [element('1'), element('2'), ...(guess ? [guess] : [])],
          call,
        ),
        aggregate: true,
      };
    }
    case 'to_time': {
      if (!plain) return undefined;
      // to_time(s[, time_zone]) = parseDateTime64BestEffortUSOrZero(s, 3[, time_zone]);
      // to_time(s, time_zone, default): the default where s does not parse.
      const [s, tz, fallback] = a;
      if (!s || a.length > 3) return undefined;
      if (tz && fallback) {
        const parsed = fn('parseDateTime64BestEffortUSOrNull', [s, num('3', call), tz], call);
        const value = fn('toDateTime64', [fallback, num('3', call), tz], call);
        return { kind: 'call', call: fn('ifNull', [parsed, value], call), aggregate: false };
      }
      return {
        kind: 'call',
        call: fn(
          'parseDateTime64BestEffortUSOrZero',
          tz ? [s, num('3', call), tz] : [s, num('3', call)],
          call,
        ),
        aggregate: false,
      };
    }
    default:
      return undefined;
  }
}

/** Proton functions (and their combinator forms) mapped by `special` rather than by name. */
export const SPECIAL_BASES: readonly string[] = [
  'p90',
  'p95',
  'p99',
  'top_k_exact_weighted',
  'top_k_weighted',
  'top_k_exact',
  'top_k',
  'min_k',
  'max_k',
  'to_time',
  'xirr',
];
const SNAKE_COMBINATORS: Record<string, string> = {
  if: 'If',
  distinct: 'Distinct',
  array: 'Array',
  state: 'State',
  merge: 'Merge',
  or_null: 'OrNull',
  or_default: 'OrDefault',
  for_each: 'ForEach',
  null: 'Null',
  simple_state: 'SimpleState',
  resample: 'Resample',
  map: 'Map',
};

const SNAKE_COMBINATOR_KEYS = Object.keys(SNAKE_COMBINATORS).sort((x, y) => y.length - x.length);

/** `p90_if` -> ['p90', 'If']; undefined when the name is not a special with combinators. */
function splitSpecial(lower: string): [string, string] | undefined {
  for (const base of SPECIAL_BASES) {
    if (lower === base) return [base, ''];
    if (!lower.startsWith(`${base}_`)) continue;
    let rest = lower.slice(base.length + 1);
    let suffix = '';
    while (rest) {
      const hit = SNAKE_COMBINATOR_KEYS.find((c) => rest === c || rest.startsWith(`${c}_`));
      if (!hit) return undefined;
      suffix += SNAKE_COMBINATORS[hit] as string;
      rest = rest.slice(hit.length + 1);
    }
    return [base, suffix];
  }
  return undefined;
}

const materialized = (e: Expr): Expr => ({
  kind: 'Function',
  name: 'materialize',
  args: [e],
  distinct: false,
  span: e.span,
});

/** Map one Proton call to the engine (see CallMapping). */
export function mapFunctionCall(call: FunctionCall, extra?: ExtraFunctions): CallMapping {
  const lower = call.name.toLowerCase();
  if (isStreamingOnlyFunction(lower)) return { kind: 'streaming', name: lower };
  let mapped: CallMapping | undefined;
  const split = splitSpecial(lower);
  if (split && !call.params) mapped = special(split[0], call, split[1]);
  if (!mapped && !call.params) {
    const own = mapProtonOnlyCall(lower, call);
    if (own) mapped = { kind: 'call', call: own, aggregate: false };
  }
  if (!mapped) {
    const resolved = resolveFunctionName(call.name);
    if (resolved) {
      const { args, params } = parametric(resolved, call);
      mapped = {
        kind: 'call',
        call: { ...call, name: resolved.clickhouse, args, ...(params ? { params } : {}) },
        aggregate: resolved.aggregate,
      };
    } else {
      const udf = extra?.(call.name);
      // A user-defined function's arguments are materialized: the engine would otherwise call it
      // on constant arguments while it plans the query, which chDB does on the caller's thread.
      if (udf)
        mapped = {
          kind: 'call',
          call: { ...call, name: udf.clickhouse, args: call.args.map((a) => materialized(a)) },
          aggregate: udf.aggregate ?? false,
        };
    }
  }
  if (!mapped) {
    const reason = unsupportedProtonFunction(call.name);
    if (reason) return { kind: 'unsupported', name: call.name, reason };
    const suggestion = suggestFunctionName(call.name);
    return { kind: 'unknown', name: call.name, ...(suggestion ? { suggestion } : {}) };
  }
  if (mapped.kind !== 'call' || !call.filter) return mapped;
  // max(x) FILTER (WHERE c) -> maxIf(x, c)
  const c = mapped.call;
  const { filter: _f, ...rest } = c;
  return { ...mapped, call: { ...rest, name: `${c.name}If`, args: [...c.args, call.filter] } };
}

/**
 * max_k's (x, context...) tuples, largest x first and, among equal x, the smaller context first
 * (Proton's max_k(value, 2, id) over 66 'dev1' and 66 'dev8' keeps 'dev1', also when the two came
 * on either side of a RECOVER): sorted ascending by the whole tuple, then descending by x with
 * the ascending position breaking ties, so the order never depends on the order rows were merged.
 */
function largestFirstTiesByContext(tuples: Expr, call: FunctionCall): Expr {
  const ascending = fn('arraySort', [tuples], call);
  const key: Expr = {
    kind: 'Tuple',
    elements: [
      fn('tupleElement', [{ kind: 'Identifier', parts: ['__x'], span: call.span }, num('1', call)], call),
      {
        kind: 'Unary',
        op: '-',
        operand: { kind: 'Identifier', parts: ['__i'], span: call.span },
        span: call.span,
      },
    ],
    span: call.span,
  };
  return fn(
    'arrayReverseSort',
    [
      { kind: 'Lambda', params: ['__x', '__i'], body: key, span: call.span },
      ascending,
      fn('arrayEnumerate', [ascending], call),
    ],
    call,
  );
}
