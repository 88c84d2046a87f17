import type { IntervalUnit } from '../sql/ast/expression.ts';
import { intervalMillis, isCalendarUnit, type WindowInterval } from './window-interval.ts';

/**
 * Event times in windows, watermarks and window bounds are nanoseconds since the epoch as BigInt:
 * windows go down to 1ns on datetime64(9) columns, which milliseconds in a JS number cannot hold.
 */
export type Nanos = bigint;

const NANOS: Partial<Record<IntervalUnit, bigint>> = {
  NANOSECOND: 1n,
  MICROSECOND: 1_000n,
  MILLISECOND: 1_000_000n,
  SECOND: 1_000_000_000n,
  MINUTE: 60_000_000_000n,
  HOUR: 3_600_000_000_000n,
  DAY: 86_400_000_000_000n,
  WEEK: 604_800_000_000_000n,
};
const MONTHS: Partial<Record<IntervalUnit, number>> = { MONTH: 1, QUARTER: 3, YEAR: 12 };
const NS_PER_MS = 1_000_000n;

/** The smallest and largest values the engine's Int64 holds (no watermark / everything final). */
export const MIN_NANOS = -9_223_372_036_854_775_807n;

function fixedNanos(i: WindowInterval): bigint {
  const unit = NANOS[i.unit];
  if (unit === undefined) return BigInt(Math.round(intervalMillis(i))) * NS_PER_MS;
  return BigInt(i.value) * unit;
}

/** `t + n * interval` (UTC calendar for months, quarters and years, clamped like the engine's addMonths). */
export function addNanos(t: Nanos, i: WindowInterval, n = 1): Nanos {
  const months = MONTHS[i.unit];
  if (months === undefined) return t + BigInt(n) * fixedNanos(i);
  const ms = Number(t / NS_PER_MS);
  const rest = t - BigInt(ms) * NS_PER_MS;
  const d = new Date(ms);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + n * i.value * months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const timeOfDay = ms - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return BigInt(Date.UTC(year, month, Math.min(d.getUTCDate(), lastDay)) + timeOfDay) * NS_PER_MS + rest;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** The start of the window of size `i` holding `t`, aligned like the engine's toStartOfInterval (UTC). */
export function windowStartNanos(t: Nanos, i: WindowInterval): Nanos {
  const months = MONTHS[i.unit];
  if (months !== undefined) {
    const d = new Date(Number(floorDiv(t, NS_PER_MS)));
    const total = d.getUTCFullYear() * 12 + d.getUTCMonth();
    const step = i.value * months;
    const start = Math.floor(total / step) * step;
    return BigInt(Date.UTC(Math.floor(start / 12), start % 12, 1)) * NS_PER_MS;
  }
  const size = fixedNanos(i);
  // Weeks start on Monday: 1970-01-05 was the first Monday after the epoch.
  const origin = i.unit === 'WEEK' ? 4n * 86_400_000_000_000n : 0n;
  return floorDiv(t - origin, size) * size + origin;
}

/** Epoch milliseconds as nanoseconds. */
export function nanosFromMillis(ms: number): Nanos {
  return BigInt(Math.floor(ms)) * NS_PER_MS;
}

/** Nanoseconds as epoch milliseconds (for metrics). */
export function millisFromNanos(t: Nanos): number {
  return Number(floorDiv(t, NS_PER_MS));
}

export { isCalendarUnit };
