import { err } from '../../errors/tributary-error.ts';
import type { Expr, IntervalExpr, IntervalUnit } from '../ast/expression.ts';

/**
 * Historical translation of Proton's window table functions. Each becomes a subquery over its
 * source that adds `window_start` / `window_end` (streaming-sql-notes.md §1.5). The engine's own
 * tumble() refuses DateTime64, so windows are computed with toStartOfInterval and cast back to
 * the time column's type.
 */

export interface WindowArgs {
  readonly source: Expr;
  /** The time column expression; `_tp_time` when omitted. */
  readonly timeColumn?: Expr;
  /** Interval arguments in order (tumble: size; hop: slide, size; session: idle[, max]). */
  readonly intervals: readonly Expr[];
  /** Whatever follows the intervals (time zone; session start/end conditions). */
  readonly rest: readonly Expr[];
}

function isInterval(e: Expr | undefined): boolean {
  return (
    e !== undefined && (e.kind === 'Interval' || (e.kind === 'Function' && /^to_?interval_?/i.test(e.name)))
  );
}

/** Split `f(source, [time_col], interval..., rest...)`. */
export function splitWindowArgs(name: string, args: readonly Expr[], intervalCount: number): WindowArgs {
  const [source, ...tail] = args;
  if (!source)
    throw err('BAD_ARGUMENTS', { detail: `${name}() needs a source stream as its first argument` });
  let i = 0;
  let timeColumn: Expr | undefined;
  if (tail[0] !== undefined && !isInterval(tail[0])) {
    timeColumn = tail[0];
    i = 1;
  }
  const intervals: Expr[] = [];
  while (intervals.length < intervalCount && isInterval(tail[i])) intervals.push(tail[i++] as Expr);
  if (intervals.length === 0)
    throw err('BAD_ARGUMENTS', { detail: `${name}() needs a window interval, e.g. ${name}(s, 5s)` });
  return { source, ...(timeColumn ? { timeColumn } : {}), intervals, rest: tail.slice(i) };
}

/** Pieces of SQL the window builders combine; all already translated to ClickHouse. */
export interface WindowSql {
  /** The source as it goes in FROM (a table name or a parenthesised subquery). */
  readonly source: string;
  /** The select-star of the source (`*` or `* EXCEPT (...)`). */
  readonly star: string;
  readonly timeColumn: string;
  readonly timeZone?: string;
}

/** `window_start` of the window containing `time`, in the time column's own type. */
function windowStart(w: WindowSql, interval: string): string {
  return `CAST(toStartOfInterval(${w.timeColumn}, ${interval}${w.timeZone ? `, ${w.timeZone}` : ''}), toTypeName(${w.timeColumn}))`;
}

/** tumble: every row gets the one fixed window containing its time. */
export function tumbleSql(w: WindowSql, size: string): string {
  return `(SELECT ${w.star}, ${windowStart(w, size)} AS window_start, window_start + ${size} AS window_end FROM ${w.source})`;
}

/** Literal interval parts, needed to count the windows a hop row belongs to. */
export function intervalParts(e: Expr): { n: number; unit: IntervalUnit } | undefined {
  if (e.kind !== 'Interval') return undefined;
  const v = e.value;
  const text = v.kind === 'Number' ? v.text : v.kind === 'String' ? v.value : undefined;
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return { n: Number(text), unit: e.unit };
}

const INTERVAL_FUNCTION: Record<IntervalUnit, string> = {
  NANOSECOND: 'toIntervalNanosecond',
  MICROSECOND: 'toIntervalMicrosecond',
  MILLISECOND: 'toIntervalMillisecond',
  SECOND: 'toIntervalSecond',
  MINUTE: 'toIntervalMinute',
  HOUR: 'toIntervalHour',
  DAY: 'toIntervalDay',
  WEEK: 'toIntervalWeek',
  MONTH: 'toIntervalMonth',
  QUARTER: 'toIntervalQuarter',
  YEAR: 'toIntervalYear',
};

/**
 * hop: a row belongs to every window [start, start + size) with start on the slide grid and
 * start <= time < start + size; arrayJoin expands it into one row per window.
 */
export function hopSql(
  w: WindowSql,
  slide: IntervalExpr,
  size: IntervalExpr,
  slideSql: string,
  sizeSql: string,
): string {
  const s = intervalParts(slide);
  const z = intervalParts(size);
  if (!s || !z || s.n <= 0 || z.n <= 0) {
    throw err('NOT_IMPLEMENTED', {
      detail: 'hop() needs literal positive slide and size intervals, e.g. hop(s, ts, 1s, 5s)',
    });
  }
  if (s.unit !== z.unit)
    throw err('BAD_ARGUMENTS', { detail: 'hop() slide and size must use the same interval unit' });
  if (s.n > z.n) throw err('BAD_ARGUMENTS', { detail: 'hop() slide must not be larger than its size' });
  const count = Math.ceil(z.n / s.n);
  const starts = `arrayMap(__i -> ${windowStart(w, slideSql)} - ${INTERVAL_FUNCTION[s.unit]}(__i * ${s.n}), range(${count}))`;
  const inWindow = `arrayFilter(__w -> __w + ${sizeSql} > ${w.timeColumn}, ${starts})`;
  return `(SELECT *, window_start + ${sizeSql} AS window_end FROM (SELECT ${w.star}, arrayJoin(${inWindow}) AS window_start FROM ${w.source}))`;
}

/** dedup(s, keys...[, ttl[, limit]]): the first row per key. */
export function dedupSql(w: Omit<WindowSql, 'timeColumn'>, keys: readonly string[]): string {
  return `(SELECT ${w.star} FROM ${w.source} LIMIT 1 BY ${keys.join(', ')})`;
}
