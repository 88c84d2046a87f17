import { err } from '../errors/tributary-error.ts';
import { conjuncts } from '../sql/analyzer/query-facts.ts';
import type { Expr } from '../sql/ast/expression.ts';
import { printExpression } from '../sql/printer/format.ts';

/** Which side of a join an expression reads: 'left', 'right', 'both', or undefined (constants). */
export type JoinSide = 'left' | 'right' | 'both' | undefined;

/**
 * The time range of a stream-to-stream range join (streaming-sql-notes.md §1.9), normalised as
 * Proton does (CollectJoinOnKeysVisitor.cpp, RangeAsofJoinContext.cpp):
 * `lower <(=) left - right <(=) upper`, both bounds in seconds, where `left` reads only the left
 * side and `right` only the right side.
 */
export interface RangeCondition {
  readonly left: Expr;
  readonly right: Expr;
  readonly lower: number;
  readonly upper: number;
  readonly lowerStrict: boolean;
  readonly upperStrict: boolean;
}

/** Proton's `max_join_range` default (Settings.h): upper - lower may span at most 300 s. */
export const MAX_JOIN_RANGE_SECONDS = 300;

const bad = (detail: string) => err('INVALID_RANGE_JOIN', { detail });

function numberOf(e: Expr): number | undefined {
  if (e.kind === 'Number' && /^-?\d+$/.test(e.text)) return Number(e.text);
  if (e.kind === 'Unary' && e.op === '-') {
    const v = numberOf(e.operand);
    return v === undefined ? undefined : -v;
  }
  return undefined;
}

/** Seconds of a `date_diff_within` interval (only seconds and minutes, as Proton). */
function intervalSeconds(e: Expr): number {
  let value: number | undefined;
  let unit: string | undefined;
  if (e.kind === 'Interval') {
    value = numberOf(e.value);
    unit = e.unit;
  } else if (e.kind === 'Function') {
    const m = /^to_?interval_?(\w+)$/i.exec(e.name);
    value = e.args[0] ? numberOf(e.args[0]) : undefined;
    unit = m?.[1]?.toUpperCase();
  }
  if (value === undefined || unit === undefined)
    throw bad(`The first argument of date_diff_within must be a time interval such as 10s or 2m`);
  if (unit !== 'SECOND' && unit !== 'MINUTE') {
    throw err('NOT_IMPLEMENTED', {
      detail: `date_diff_within only takes a second or minute interval (such as 10s or 2m), not ${unit.toLowerCase()}`,
    });
  }
  if (value <= 0)
    throw err('BAD_ARGUMENTS', { detail: 'The interval of date_diff_within must be positive, such as 10s' });
  return unit === 'MINUTE' ? value * 60 : value;
}

/** A column (an identifier) somewhere in `e`. */
function readsColumn(e: Expr | undefined): boolean {
  return e !== undefined && JSON.stringify(e).includes('"kind":"Identifier"');
}

/**
 * `date_diff(unit, a, b)` between two columns: a range bound (a date_diff against a constant, such
 * as `date_diff('second', ts, now()) < 5`, is a plain filter).
 */
export function isDateDiff(e: Expr): e is Expr & { kind: 'Function' } {
  return (
    e.kind === 'Function' &&
    e.name.toLowerCase() === 'date_diff' &&
    e.args.length === 3 &&
    readsColumn(e.args[1]) &&
    readsColumn(e.args[2])
  );
}

/** Does a join's ON hold a time range (date_diff_within, or bounds on a date_diff of two columns)? */
export function hasRangeCondition(on: Expr | undefined): boolean {
  return conjuncts(on).some(
    (c) =>
      (c.kind === 'Function' && c.name.toLowerCase() === 'date_diff_within') ||
      (c.kind === 'Between' && isDateDiff(c.expr)) ||
      (c.kind === 'Binary' && (isDateDiff(c.left) || isDateDiff(c.right))),
  );
}

/** Seconds per unit of a `date_diff('second'|'minute', a, b)` used as a join range. */
function dateDiffFactor(f: Expr & { kind: 'Function' }): number {
  const unit = f.args[0];
  const name = unit?.kind === 'String' ? unit.value.toLowerCase() : undefined;
  if (name === 'second') return 1;
  if (name === 'minute') return 60;
  throw err('NOT_IMPLEMENTED', {
    detail: `A stream-to-stream range join takes date_diff('second', ...) or date_diff('minute', ...), not ${printExpression(f)}`,
  });
}

interface Bound {
  value: number;
  strict: boolean;
}

/**
 * Split the ON conjuncts of a stream-to-stream join into its range condition (if any) and the rest.
 * Forms (all Proton's): `date_diff_within(10s)` (each side's `_tp_time`),
 * `date_diff_within(10s, a, b)`, `date_diff('second', a, b) BETWEEN x AND y`, and two comparisons
 * `date_diff(...) > x AND date_diff(...) < y` (the same date_diff both times). `date_diff(u, a, b)`
 * here means `a - b` (Proton's reading, the opposite sign of the engine's dateDiff).
 */
export function extractRange(
  conjuncts: readonly Expr[],
  sideOf: (e: Expr) => JoinSide,
  tpTime: { left: Expr; right: Expr },
): { range?: RangeCondition; rest: Expr[] } {
  const rest: Expr[] = [];
  let range: RangeCondition | undefined;
  let diff: { f: Expr & { kind: 'Function' }; text: string } | undefined;
  let lower: Bound | undefined;
  let upper: Bound | undefined;
  const orient = (a: Expr, b: Expr): { left: Expr; right: Expr; flipped: boolean } => {
    const sa = sideOf(a);
    const sb = sideOf(b);
    if (sa === 'right' || sb === 'left') return { left: b, right: a, flipped: true };
    if (sa === 'both' || sb === 'both')
      throw err('INVALID_JOIN_ON_EXPRESSION', {
        detail: `Each time argument of a range join must read one side only: ${printExpression(a)}, ${printExpression(b)}`,
      });
    return { left: a, right: b, flipped: false };
  };
  const setDiff = (f: Expr & { kind: 'Function' }) => {
    const text = printExpression(f);
    if (diff && diff.text !== text)
      throw bad(
        `A range join needs the same date_diff expression on both bounds, got ${diff.text} and ${text}`,
      );
    if (range) throw bad('Only one range (date_diff_within or date_diff bounds) is allowed in a join');
    diff = { f, text };
  };
  const addBound = (op: string, value: number, valueOnLeft: boolean) => {
    // Normalise `value op x` to `x op' value`.
    const flip: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=' };
    const o = valueOnLeft ? (flip[op] as string) : op;
    const bound = { value, strict: o === '<' || o === '>' };
    if (o === '>' || o === '>=') {
      if (lower) throw bad('Found more than 2 unequal expressions in the ON clause of a range join');
      lower = bound;
    } else {
      if (upper) throw bad('Found more than 2 unequal expressions in the ON clause of a range join');
      upper = bound;
    }
  };
  for (const c of conjuncts) {
    if (c.kind === 'Function' && c.name.toLowerCase() === 'date_diff_within') {
      if (range || diff)
        throw bad('Only one range (date_diff_within or date_diff bounds) is allowed in a join');
      if (c.args.length !== 1 && c.args.length !== 3)
        throw bad(`date_diff_within takes 1 or 3 arguments: date_diff_within(10s[, left_time, right_time])`);
      const seconds = intervalSeconds(c.args[0] as Expr);
      const { left, right } = c.args.length === 3 ? orient(c.args[1] as Expr, c.args[2] as Expr) : tpTime;
      range = { left, right, lower: -seconds, upper: seconds, lowerStrict: false, upperStrict: false };
      continue;
    }
    if (c.kind === 'Between' && !c.not && isDateDiff(c.expr)) {
      const lo = numberOf(c.low);
      const hi = numberOf(c.high);
      if (lo === undefined || hi === undefined)
        throw bad('A range join takes integer bounds: BETWEEN -10 AND 10');
      setDiff(c.expr);
      addBound('>=', lo, false);
      addBound('<=', hi, false);
      continue;
    }
    if (c.kind === 'Binary' && ['<', '>', '<=', '>='].includes(c.op)) {
      const [f, value, valueOnLeft] = isDateDiff(c.left)
        ? [c.left, numberOf(c.right), false]
        : isDateDiff(c.right)
          ? [c.right, numberOf(c.left), true]
          : [undefined, undefined, false];
      if (f && value !== undefined) {
        setDiff(f as Expr & { kind: 'Function' });
        addBound(c.op, value, valueOnLeft);
        continue;
      }
    }
    rest.push(c);
  }
  if (diff) {
    if (!lower || !upper)
      throw bad(
        'Range join requires specifying a range on join clause, but only lower bound or upper bound of a range is specified',
      );
    const factor = dateDiffFactor(diff.f);
    const { left, right, flipped } = orient(diff.f.args[1] as Expr, diff.f.args[2] as Expr);
    // date_diff(u, right, left) = -(left - right): the bounds swap and change sign.
    const [lo, hi] = flipped
      ? [
          { value: 0 - upper.value, strict: upper.strict },
          { value: 0 - lower.value, strict: lower.strict },
        ]
      : [lower, upper];
    range = {
      left,
      right,
      lower: lo.value * factor,
      upper: hi.value * factor,
      lowerStrict: lo.strict,
      upperStrict: hi.strict,
    };
  }
  if (range) validateRange(range);
  return { ...(range ? { range } : {}), rest };
}

/** Proton's RangeAsofJoinContext::validate, with its messages. */
function validateRange(r: RangeCondition): void {
  if (r.lower > 0)
    throw bad(
      `Range join requires left bound of the range is less than or equal to zero, but got lower_bound=${r.lower}; shift a time column instead, e.g. date_diff('second', date_sub(left_time, 1s), right_time) BETWEEN 0 AND 10`,
    );
  if (r.upper < 0)
    throw bad(
      `Range join requires right bound of the range is greater than or equal to zero, but got upper_bound=${r.upper}`,
    );
  if (r.lower >= r.upper)
    throw bad(
      `Range join requires upper bound of the range is bigger than the lower bound, but got lower_bound=${r.lower}, upper_bound=${r.upper}`,
    );
  if (r.upper - r.lower > MAX_JOIN_RANGE_SECONDS)
    throw bad(
      `The join range (${r.lower}, ${r.upper}) is too big (at most ${MAX_JOIN_RANGE_SECONDS} seconds). If two streams have big difference in timestamps, shift one of them, e.g. date_diff_within(2m, left_time, date_add(right_time, 2h))`,
    );
}
