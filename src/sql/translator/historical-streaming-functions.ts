import { err } from '../../errors/tributary-error.ts';
import type { Expr, FunctionCall, WindowSpec } from '../ast/expression.ts';
import { monotonicExpr } from './monotonic-call.ts';

/**
 * Proton functions that the streaming planner runs in streaming queries and that Proton also
 * accepts in historical (table) queries, with their historical meaning as Proton gives it:
 *
 * - `lag(x[, n = 1[, default]])`: x of the row n rows before in the order rows are read, or the
 *   default (the type's default when omitted) for the first n rows. Proton's `lag` is a stateful
 *   function over the rows as they pass; a window over the whole result in read order answers the
 *   same: `lagInFrame(x, n[, default]) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`.
 * - `lags(x, from, to[, default])`: `[lag(x, from), lag(x, from + 1), ..., lag(x, to)]`.
 * - `earliest_ts()` / `earliest_timestamp([time_zone])`: the constant `1970-01-01 00:00:00`
 *   (a datetime, in the time zone if one is given).
 * - `date_diff_within(interval, t1, t2)`: t2 within the interval of t1 (`t1 - i <= t2 <= t1 + i`),
 *   the range condition Proton makes of it in a JOIN ON. The one-argument form (each side's
 *   `_tp_time`) stays streaming-only (NOT_IMPLEMENTED, which the analyzer tolerates).
 * - `lag_behind(offset[, t1, t2])`: how far a streaming join's sides may drift apart; a historical
 *   query reads both sides whole, so the condition always holds (`true`).
 * - `monotonic(n)`: n, n + 1, ... over the query's rows in read order (monotonic-call.ts).
 *
 * `emit_version()` has no historical meaning (there are no emits) and stays refused.
 */
export function historicalStreamingCall(f: FunctionCall): Expr | undefined {
  const a = f.args;
  const at = f.span;
  const call = (name: string, args: readonly Expr[], over?: WindowSpec): FunctionCall => ({
    kind: 'Function',
    name,
    args,
    distinct: false,
    ...(over ? { over } : {}),
    span: at,
  });
  const num = (n: number): Expr => ({ kind: 'Number', text: String(n), span: at });
  const readOrder: WindowSpec = {
    kind: 'WindowSpec',
    partitionBy: [],
    orderBy: [],
    frame: { units: 'ROWS', start: { kind: 'UNBOUNDED PRECEDING' }, end: { kind: 'CURRENT ROW' } },
    span: at,
  };
  const lag = (x: Expr, n: Expr, fallback: Expr | undefined) =>
    call('lagInFrame', fallback ? [x, n, fallback] : [x, n], readOrder);
  switch (f.name.toLowerCase()) {
    case 'lag': {
      const [x, n, fallback] = a;
      if (!x || a.length > 3) throw arity(f, 'lag(x[, offset[, default]])');
      return lag(x, n ?? num(1), fallback);
    }
    case 'lags': {
      const [x, from, to, fallback] = a;
      if (!x || !from || !to || a.length > 4) throw arity(f, 'lags(x, begin_offset, end_offset[, default])');
      const begin = constantOffset(f, from);
      const end = constantOffset(f, to);
      if (end < begin)
        throw err('BAD_ARGUMENTS', {
          detail: `lags(): the end offset ${end} is before the begin offset ${begin}`,
        });
      const elements: Expr[] = [];
      for (let i = begin; i <= end; i++) elements.push(lag(x, num(i), fallback));
      return { kind: 'Array', elements, span: at };
    }
    case 'earliest_ts':
    case 'earliest_timestamp':
      if (a.length > 1) throw arity(f, `${f.name}([time_zone])`);
      return call('toDateTime', [num(0), ...a]);
    case 'date_diff_within': {
      // date_diff_within(interval): each join side's _tp_time, which only a streaming join knows.
      if (a.length === 1)
        throw err('NOT_IMPLEMENTED', {
          detail:
            "date_diff_within(interval) (each side's _tp_time) is only supported in streaming joins; write date_diff_within(interval, left_time, right_time)",
        });
      const [range, t1, t2] = a;
      if (!range || !t1 || !t2 || a.length !== 3) throw arity(f, 'date_diff_within(interval, time1, time2)');
      const low: Expr = { kind: 'Binary', op: '-', left: t1, right: range, span: at };
      const high: Expr = { kind: 'Binary', op: '+', left: t1, right: range, span: at };
      return {
        kind: 'Binary',
        op: 'AND',
        left: { kind: 'Binary', op: '>=', left: t2, right: low, span: at },
        right: { kind: 'Binary', op: '<=', left: t2, right: high, span: at },
        span: at,
      };
    }
    case 'monotonic':
      return monotonicExpr(f);
    case 'lag_behind':
      if (a.length !== 1 && a.length !== 3) throw arity(f, 'lag_behind(offset[, time1, time2])');
      return { kind: 'Bool', value: true, span: at };
    default:
      return undefined;
  }
}

function arity(f: FunctionCall, form: string) {
  return err('BAD_ARGUMENTS', { detail: `${f.name}() takes ${form}; got ${f.args.length} arguments` });
}

/** A lags() offset: a positive integer literal, as Proton requires (1 .. 2^30). */
function constantOffset(f: FunctionCall, e: Expr): number {
  const n = e.kind === 'Number' ? Number(e.text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 30)
    throw err('BAD_ARGUMENTS', {
      detail: `${f.name}(): offsets must be integer constants from 1 to ${2 ** 30}`,
    });
  return n;
}
