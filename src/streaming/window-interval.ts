import { err } from '../errors/tributary-error.ts';
import type { Expr, IntervalUnit } from '../sql/ast/expression.ts';

/** An interval of a window, a delay, a periodic or timeout policy: `5s`, `INTERVAL 2 MINUTE`. */
export interface WindowInterval {
  readonly value: number;
  readonly unit: IntervalUnit;
}

const FIXED_MS: Partial<Record<IntervalUnit, number>> = {
  NANOSECOND: 1e-6,
  MICROSECOND: 1e-3,
  MILLISECOND: 1,
  SECOND: 1000,
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
  WEEK: 7 * 86_400_000,
};

/** Months per calendar unit. */
const MONTHS: Partial<Record<IntervalUnit, number>> = { MONTH: 1, QUARTER: 3, YEAR: 12 };

function numberOf(expr: Expr): number | undefined {
  if (expr.kind === 'Number') return Number(expr.text);
  if (expr.kind === 'Unary' && expr.op === '-') {
    const v = numberOf(expr.operand);
    return v === undefined ? undefined : -v;
  }
  if (expr.kind === 'String' && /^-?\d+$/.test(expr.value.trim())) return Number(expr.value);
  return undefined;
}

/** The interval an expression denotes, or a BAD_ARGUMENTS error naming what was expected. */
export function intervalOf(expr: Expr, what: string): WindowInterval {
  if (expr.kind === 'Interval') {
    const value = numberOf(expr.value);
    if (value === undefined || !Number.isFinite(value)) {
      throw err('BAD_ARGUMENTS', {
        detail: `${what} must be a constant interval such as 5s or INTERVAL 5 SECOND`,
      });
    }
    return { value, unit: expr.unit };
  }
  if (expr.kind === 'Function') {
    const m =
      /^to_?interval_?(nanosecond|microsecond|millisecond|second|minute|hour|day|week|month|quarter|year)$/i.exec(
        expr.name,
      );
    const arg = expr.args[0];
    const value = arg ? numberOf(arg) : undefined;
    if (m && value !== undefined) return { value, unit: m[1]!.toUpperCase() as IntervalUnit };
  }
  throw err('BAD_ARGUMENTS', {
    detail: `${what} must be a constant interval such as 5s or INTERVAL 5 SECOND`,
  });
}

export function isCalendarUnit(unit: IntervalUnit): boolean {
  return unit in MONTHS;
}

/** The interval in milliseconds; calendar units (month, quarter, year) have no fixed length. */
export function intervalMillis(i: WindowInterval): number {
  const ms = FIXED_MS[i.unit];
  if (ms === undefined)
    throw err('NOT_IMPLEMENTED', {
      detail: `an interval in ${i.unit.toLowerCase()}s has no fixed length here`,
    });
  return i.value * ms;
}

/** `t + n * interval`, in epoch milliseconds (UTC calendar for months, quarters, years). */
export function addInterval(t: number, i: WindowInterval, n = 1): number {
  const months = MONTHS[i.unit];
  if (months === undefined) return t + n * intervalMillis(i);
  // Like the engine's addMonths: the day is clamped to the target month's last day.
  const d = new Date(t);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + n * i.value * months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const timeOfDay = t - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay)) + timeOfDay;
}

/**
 * The start of the window of size `i` that holds `t`, aligned to the epoch like the engine's
 * `toStartOfInterval` (UTC).
 */
export function windowStartOf(t: number, i: WindowInterval): number {
  const months = MONTHS[i.unit];
  if (months !== undefined) {
    const d = new Date(t);
    const total = d.getUTCFullYear() * 12 + d.getUTCMonth();
    const step = i.value * months;
    const start = Math.floor(total / step) * step;
    return Date.UTC(Math.floor(start / 12), start % 12, 1);
  }
  if (i.unit === 'WEEK') {
    // The engine aligns weeks to Monday (1970-01-05 was the first Monday after the epoch).
    const week = intervalMillis(i);
    const monday = 4 * 86_400_000;
    return Math.floor((t - monday) / week) * week + monday;
  }
  const size = intervalMillis(i);
  return Math.floor(t / size) * size;
}

/** The interval as SQL for the engine: `INTERVAL 5 SECOND`. */
export function intervalSql(i: WindowInterval): string {
  return `INTERVAL ${i.value} ${i.unit}`;
}
