/* Planning the range join of two streams (`date_diff_within`, join-program.ts RangeJoin). */
import { err } from '../errors/tributary-error.ts';
import { andAll, conjuncts } from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, Query, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, walk } from '../sql/ast/walk.ts';
import { aliasOf, columnsOf, notImplemented, sourcesIn } from './join-ast.ts';
import type { JoinPlan, JoinPlanContext } from './join-planner.ts';
import { JOIN_MIN_LEFT, JOIN_MIN_RIGHT } from './join-program.ts';
import { extractRange, type JoinSide, type RangeCondition } from './join-range.ts';
import { SqlTemplate } from './sql-template.ts';
import type { BoundSource } from './stream-bindings.ts';

export async function planRangeJoin(
  select: SelectQuery,
  j: JoinExpr,
  sources: readonly BoundSource[],
  ctes: ReadonlyMap<string, Query>,
  ctx: JoinPlanContext,
  leftJoin: boolean,
): Promise<Omit<JoinPlan, 'snapshots'>> {
  const leftAlias = aliasOf(j.left);
  const rightAlias = aliasOf(j.right);
  const leftSource = [...sourcesIn(j.left, ctes)][0] as number;
  const rightSource = [...sourcesIn(j.right, ctes)][0] as number;
  if (leftAlias === undefined || rightAlias === undefined)
    throw notImplemented('A range join needs both sides named (a stream, or a subquery with an alias)');
  const leftColumns = columnsOf(j.left, sources, ctx);
  const rightColumns = columnsOf(j.right, sources, ctx);
  const sideOf = (e: Expr): JoinSide => {
    let left = false;
    let right = false;
    walk(e as AnyNode, (n) => {
      if (n.kind !== 'Identifier') return undefined;
      const parts = (n as unknown as { parts: string[] }).parts;
      if (parts.length >= 2 && parts[parts.length - 2] === leftAlias) left = true;
      else if (parts.length >= 2 && parts[parts.length - 2] === rightAlias) right = true;
      else if (parts.length === 1) {
        const name = parts[0] as string;
        const inL = leftColumns?.has(name) ?? false;
        const inR = rightColumns?.has(name) ?? false;
        if (inL && !inR) left = true;
        if (inR && !inL) right = true;
      }
      return undefined;
    });
    return left && right ? 'both' : left ? 'left' : right ? 'right' : undefined;
  };
  const on = conjuncts(j.on);
  const { range, rest } = extractRange(on, sideOf, {
    left: ident(leftAlias, '_tp_time'),
    right: ident(rightAlias, '_tp_time'),
  });
  if (!range) throw new Error('range join planned without a range');
  for (const c of rest) {
    if (sideOf(c) === 'both' && !(c.kind === 'Binary' && c.op === '='))
      throw err('INVALID_JOIN_ON_EXPRESSION', {
        detail: `Unsupported condition between both sides of a range join: only equal keys and one time range are allowed`,
      });
  }
  if (!rest.some((c) => c.kind === 'Binary' && c.op === '=' && sideOf(c) === 'both'))
    throw err('INVALID_JOIN_ON_EXPRESSION', {
      detail: `A range join requires at least one equal join key between the two streams, e.g. ON l.k = r.k AND date_diff_within(10s)`,
    });

  // Bucket size: Proton halves the range in the time column's own unit (seconds * 10^scale).
  const scale = await timeScale(range, j, ctx);
  const unitNs = 10n ** BigInt(9 - scale);
  const perSecond = 10n ** BigInt(scale);
  const width = BigInt(range.upper - range.lower) * perSecond + 1n;
  const bucket = (width / 2n) * unitNs;
  if (bucket <= 0n) throw err('INVALID_RANGE_JOIN', { detail: 'The range of the join is empty' });

  const ns = (e: Expr) => call('to_unix_timestamp64_nano', call('to_datetime64', e, num(9)));
  const bucketOf = (e: Expr) => ({
    kind: 'Binary' as const,
    op: '*' as const,
    left: call('int_div', ns(e), num(bucket.toString())),
    right: num(bucket.toString()),
    span: NO_SPAN,
  });
  const bin = (op: '>=' | '>' | '<=' | '<' | '-', left: Expr, right: Expr): Expr => ({
    kind: 'Binary',
    op,
    left,
    right,
    span: NO_SPAN,
  });
  const diff = bin('-', ns(range.left), ns(range.right));
  const lowerNs = (BigInt(range.lower) * 1_000_000_000n).toString();
  const upperNs = (BigInt(range.upper) * 1_000_000_000n).toString();
  const rangeCond = andAll([
    bin(range.lowerStrict ? '>' : '>=', diff, num(lowerNs)),
    bin(range.upperStrict ? '<' : '<=', diff, num(upperNs)),
  ]) as Expr;
  // The live / late bounds: the right side's in ON (a LEFT JOIN keeps its unmatched left rows),
  // the left side's in WHERE (a late left row is dropped).
  const rightBound = bin('>=', bucketOf(range.right), num(JOIN_MIN_RIGHT));
  const leftBound = bin('>=', bucketOf(range.left), num(JOIN_MIN_LEFT));
  const newOn = andAll([...rest, rangeCond, rightBound]) as Expr;
  const join: JoinExpr = { ...j, on: newOn };
  const where = andAll([...conjuncts(select.where), leftBound]) as Expr;
  const rewritten: SelectQuery = { ...select, from: join, where };

  // One call per step for the new buckets and where the live rows start on each side.
  const sideQuery = (item: FromItem, columns: Expr[], filter?: Expr): string =>
    ctx.translate({
      kind: 'Select',
      distinct: false,
      columns,
      from: item,
      ...(filter ? { where: filter } : {}),
      span: NO_SPAN,
    });
  const maxBucket = (item: FromItem, t: Expr) =>
    sideQuery(item, [call('to_string', call('max_or_null', bucketOf(t)))]);
  const liveSn = (item: FromItem, t: Expr, min: string) =>
    item.kind === 'Table'
      ? sideQuery(
          item,
          [call('to_string', call('min_or_null', ident(aliasOf(item) as string, '_tp_sn')))],
          bin('>=', bucketOf(t), num(min)),
        )
      : undefined;
  const template = (sql: string | undefined) => (sql === undefined ? undefined : new SqlTemplate(sql));
  // A side that is a nested query's output (a range join feeding this one): its engine table.
  const derivedTable = (i: number) => {
    const s = sources[i];
    return s?.kind === 'derived' ? s.table : undefined;
  };
  const derivedTables: [string | undefined, string | undefined] = [
    derivedTable(leftSource),
    derivedTable(rightSource),
  ];
  return {
    select: rewritten,
    ...(leftJoin ? { innerSelect: { ...rewritten, from: { ...join, joinKind: 'INNER' } } } : {}),
    latestSources: new Map(),
    program: {
      kind: 'range',
      left: leftSource,
      right: rightSource,
      leftJoin,
      bucket,
      maxBucket: [
        new SqlTemplate(maxBucket(j.left, range.left)),
        new SqlTemplate(maxBucket(j.right, range.right)),
      ],
      liveSn: [
        template(liveSn(j.left, range.left, JOIN_MIN_LEFT)),
        template(liveSn(j.right, range.right, JOIN_MIN_RIGHT)),
      ],
      ...(derivedTables.some((t) => t !== undefined) ? { prune: derivedTables } : {}),
    },
  };
}

/** The decimal scale of the range join's time columns: 0 for datetime, p for datetime64(p). */
async function timeScale(range: RangeCondition, j: JoinExpr, ctx: JoinPlanContext): Promise<number> {
  const scales: number[] = [];
  for (const [item, t] of [
    [j.left, range.left],
    [j.right, range.right],
  ] as const) {
    const sql = ctx.translate({ kind: 'Select', distinct: false, columns: [t], from: item, span: NO_SPAN });
    // Described over empty ranges: every placeholder of the step SQL as 0.
    const empty = sql.replace(/__TRB_[A-Z0-9_]+?__/g, '0');
    const d = await ctx.engine.query(`DESCRIBE (${empty})`, { format: 'JSONCompactEachRow' });
    const type = String((JSON.parse(d.text().split('\n')[0] ?? '[]') as unknown[])[1]);
    const m = /DateTime64\((\d+)/.exec(type);
    if (m) scales.push(Number(m[1]));
    else if (/DateTime|Date/.test(type)) scales.push(0);
    else
      throw err('ILLEGAL_TYPE_OF_ARGUMENT', {
        detail: `The time arguments of a range join must be datetime or datetime64 values, got ${type}`,
      });
  }
  return Math.max(...scales);
}
