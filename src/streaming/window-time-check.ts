import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, SelectQuery, TableFunctionRef, WithItem } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { splitWindowArgs } from '../sql/translator/window-sources.ts';
import { intervalOf, type WindowInterval } from './window-interval.ts';

/** Fractional-second digits an interval unit needs from the time column. */
const PRECISION_NEEDED: Partial<Record<WindowInterval['unit'], number>> = {
  NANOSECOND: 9,
  MICROSECOND: 6,
  MILLISECOND: 3,
};

/**
 * Check a window function's time column as Proton does: it must be a datetime or datetime64
 * (code 43 otherwise), and every interval must be no finer than the column's precision
 * (code 36: a 1ms window needs datetime64(3) or finer).
 */
export function validateWindowTimeType(
  fn: string,
  engineType: string,
  intervals: readonly WindowInterval[],
): void {
  let t = engineType.trim();
  for (;;) {
    const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t);
    if (!m) break;
    t = m[1] as string;
  }
  let precision: number;
  if (/^DateTime(?:32)?(?:\(|$)/.test(t)) precision = 0;
  else {
    const m = /^DateTime64\((\d+)/.exec(t);
    if (!m) {
      throw err('ILLEGAL_TYPE_OF_ARGUMENT', {
        detail: `The time column of ${fn}() must be datetime or datetime64, but it is ${t}`,
      });
    }
    precision = Number(m[1]);
  }
  for (const i of intervals) {
    const needed = PRECISION_NEEDED[i.unit] ?? 0;
    if (needed > precision) {
      throw err('BAD_ARGUMENTS', {
        detail: `The ${i.unit.toLowerCase()} interval of ${fn}() is finer than its time column ${t}; use datetime64(${needed}) or a coarser interval`,
      });
    }
  }
}

/** The intervals of a tumble/hop call (empty for other functions). */
export function windowIntervals(w: TableFunctionRef): WindowInterval[] {
  const name = w.name.toLowerCase();
  if (name !== 'tumble' && name !== 'hop') return [];
  const args = splitWindowArgs(name, w.args, name === 'hop' ? 2 : 1);
  return args.intervals.map((e, i) => intervalOf(e, `${name}() interval ${i + 1}`));
}

/**
 * The rows a window function reads, as a FROM item. Proton stamps the watermark on these rows,
 * before WHERE and before any join, so the max event time is taken here too.
 */
export function windowSourceItem(w: TableFunctionRef): FromItem {
  const source = w.args[0];
  if (source?.kind === 'Identifier') {
    const [db, name] =
      source.parts.length === 2
        ? [source.parts[0], source.parts[1] as string]
        : [undefined, source.parts[0] as string];
    return { kind: 'Table', ...(db ? { database: db } : {}), name, span: NO_SPAN };
  }
  if (source?.kind === 'Subquery') return { kind: 'SubqueryTable', query: source.query, span: NO_SPAN };
  if (source?.kind === 'Function')
    return { kind: 'TableFunction', name: source.name, args: source.args, span: NO_SPAN };
  throw err('BAD_ARGUMENTS', { detail: `${w.name}() needs a stream, a view or a subquery as its source` });
}

/** Describe the type of a window's time column over its source and validate it. */
export async function checkWindowTime(
  engine: Engine,
  w: TableFunctionRef,
  time: Expr,
  withItems: readonly WithItem[] | undefined,
  translate: (q: SelectQuery) => string | Promise<string>,
): Promise<void> {
  const intervals = windowIntervals(w);
  if (intervals.length === 0) return;
  const translated = await translate({
    kind: 'Select',
    distinct: false,
    ...(withItems ? { with: withItems } : {}),
    columns: [{ kind: 'Alias', expr: time, alias: '__time', span: NO_SPAN }],
    from: windowSourceItem(w),
    span: NO_SPAN,
  });
  const sql = translated.replace(/__TRB_[A-Z0-9_]+?__/g, '0');
  const r = await engine.query(`DESCRIBE (${sql})`, { format: 'JSONCompactEachRow', userSql: true });
  const [, type] = JSON.parse(r.text().split('\n')[0] ?? '[]') as [string, string];
  validateWindowTimeType(w.name.toLowerCase(), type ?? '', intervals);
}

/** Window functions in the FROM trees of a query (every SELECT level). */
export function windowFunctionsIn(select: SelectQuery): TableFunctionRef[] {
  const out: TableFunctionRef[] = [];
  const visit = (f: FromItem | undefined) => {
    if (!f) return;
    if (f.kind === 'Join') {
      visit(f.left);
      visit(f.right);
    } else if (f.kind === 'ArrayJoin') visit(f.left);
    else if (f.kind === 'SubqueryTable' && f.query.kind === 'Select') visit(f.query.from);
    else if (f.kind === 'TableFunction' && ['tumble', 'hop'].includes(f.name.toLowerCase())) out.push(f);
  };
  visit(select.from);
  return out;
}

/** The time column expression of a tumble/hop call (`_tp_time` when not given). */
export function windowTimeColumn(w: TableFunctionRef): Expr {
  const name = w.name.toLowerCase();
  const args = splitWindowArgs(name, w.args, name === 'hop' ? 2 : 1);
  return args.timeColumn ?? { kind: 'Identifier', parts: ['_tp_time'], span: NO_SPAN };
}
