/* Planning ASOF / LATEST joins of append streams and join alignment (`lag_behind`). */
import { err } from '../errors/tributary-error.ts';
import { andAll, conjuncts } from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, Query, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { ALIGN_UNTIL, type Alignment, alignedLeftFilter, extractAlignment, nanos } from './join-alignment.ts';
import {
  aliasOf,
  appendSide,
  columnsOf,
  cteOverOne,
  ctesOf,
  joinName,
  notImplemented,
  sourcesIn,
} from './join-ast.ts';
import type { JoinPlan, JoinPlanContext } from './join-planner.ts';
import type { EnrichJoin } from './join-program.ts';
import { SqlTemplate } from './sql-template.ts';
import type { BoundSource } from './stream-bindings.ts';

/**
 * The right stream's columns that an ASOF / LATEST join's equal keys name (`ON l.k = r.k`), by
 * which the right side keeps its versions; and how an ON operand names a right column.
 */
export function rightJoinKeys(
  j: JoinExpr,
  right: Extract<BoundSource, { kind: 'stream' }>,
  rightAlias: string,
  sources: readonly BoundSource[],
  ctx: JoinPlanContext,
): { keys: string[]; rightColumn: (e: Expr) => string | undefined } {
  const rightColumns = new Set([...right.definition.columns.map((c) => c.name), '_tp_time', '_tp_sn']);
  const leftColumns = columnsOf(j.left, sources, ctx) ?? new Set<string>();
  const rightColumn = (e: Expr): string | undefined => {
    if (e.kind !== 'Identifier') return undefined;
    if (e.parts.length === 2 && e.parts[0] === rightAlias && rightColumns.has(e.parts[1] as string))
      return e.parts[1];
    const name = e.parts[0] as string;
    if (e.parts.length === 1 && rightColumns.has(name) && !leftColumns.has(name)) return name;
    return undefined;
  };
  const keys: string[] = [];
  for (const c of conjuncts(j.on)) {
    if (c.kind !== 'Binary' || c.op !== '=') continue;
    const key = rightColumn(c.left) ?? rightColumn(c.right);
    if (key === undefined)
      throw notImplemented(
        `${joinName(j)} of two streams needs its equal keys to name columns of the right stream (ON l.k = r.k)`,
      );
    keys.push(key);
  }
  if (keys.length === 0)
    throw err('INVALID_JOIN_ON_EXPRESSION', {
      detail: `${joinName(j)} of two streams needs at least one equal key, e.g. ON l.k = r.k AND l.t >= r.t`,
    });
  return { keys, rightColumn };
}

/**
 * Append stream ASOF / LATEST JOIN append stream (Proton's HashJoin cases 5 and 7, §1.9): a
 * dynamic enrichment. Only left rows make output; the right side is kept as its last
 * `keep_versions` rows per join key (ASOF: the closest of them by the ON inequality) or its last
 * row per join key (LATEST), among the rows it received since the query started.
 */
export async function planVersionedEnrichment(
  select: SelectQuery,
  j: JoinExpr,
  sources: readonly BoundSource[],
  ctes: ReadonlyMap<string, Query>,
  ctx: JoinPlanContext,
): Promise<Omit<JoinPlan, 'snapshots'>> {
  const one = (item: FromItem) => {
    const reads = [...sourcesIn(item, ctes)];
    const s = reads.length === 1 ? sources[reads[0] as number] : undefined;
    return s?.kind === 'stream' && s.definition.mode === 'append' ? s : undefined;
  };
  const named = appendSide(j.right, sources, ctes);
  // The right side through a CTE over one append stream (`WITH r AS (SELECT i AS id, v FROM s)`).
  const right = named ?? (cteOverOne(j.right, ctes) ? one(j.right) : undefined);
  const left = one(j.left);
  const rightAlias = aliasOf(j.right);
  if (!right || !left || rightAlias === undefined)
    throw notImplemented(
      `${joinName(j)} is supported between an append stream (or a query over one) on the left and an append stream (or a CTE over one) or a versioned_kv stream on the right`,
    );
  const { on, alignment } = extractAlignment(j.on, aliasOf(j.left) ?? '', rightAlias);
  const within = { ...j, ...(on ? { on } : {}) };
  const bin = (op: '>=', l: Expr, r: Expr): Expr => ({
    kind: 'Binary',
    op,
    left: l,
    right: r,
    span: NO_SPAN,
  });
  // LATEST: one row per key is left on the right, so the join is a plain one over it. Aligned,
  // the right side as it stood at the left row's time: the last of its rows up to that time.
  const joined: JoinExpr =
    j.strictness === 'LATEST'
      ? alignment
        ? {
            ...j,
            strictness: 'ASOF',
            on: andAll([...conjuncts(on), bin('>=', alignment.left, alignment.right)]) as Expr,
          }
        : { ...j, strictness: 'ALL' }
      : within;
  // A named right stream keeps its last versions per join key; a CTE's rows are not the stream's,
  // so all its rows since the query started are kept (an ASOF join picks the closest of them).
  let keyed: JoinPlan['keyedSources'];
  if (named) {
    const { keys, rightColumn } = rightJoinKeys(within, named, rightAlias, sources, ctx);
    if (j.strictness === 'ASOF') await checkAsofColumn(j, rightColumn, select.with, ctx);
    const versions = j.strictness === 'ASOF' || alignment ? ctx.keepVersions : 1;
    keyed = new Map([[named.index, { versions, keys }]]);
  } else if (j.strictness === 'LATEST' && !alignment) {
    throw notImplemented(
      `${joinName(j)} with a CTE on the right is supported with join alignment (lag_behind); name the right stream in the FROM otherwise`,
    );
  } else if (j.strictness === 'ASOF') {
    // The CTE's columns, named through its alias (`r.t`).
    const rightColumn = (e: Expr) =>
      e.kind === 'Identifier' && e.parts.length === 2 && e.parts[0] === rightAlias ? e.parts[1] : undefined;
    await checkAsofColumn(j, rightColumn, select.with, ctx);
  }
  const { query, align } = aligned(
    select.from === j ? { ...select, from: joined } : select,
    j,
    alignment,
    ctx,
  );
  return {
    select: query,
    latestSources: new Map(),
    ...(keyed ? { keyedSources: keyed } : {}),
    program: {
      kind: 'enrich',
      left: left.index,
      right: right.index,
      rightFromStart: true,
      ...(align ? { align } : {}),
    },
  };
}

const ORDERED_TYPE = /^(U?Int\d+|Float\d+|Decimal|Date|DateTime)/;

/**
 * The right operand of an ASOF join's inequality must be ordered as a number or a time (Proton and
 * the engine keep its versions sorted by it): a string or any other type answers code 169.
 */
async function checkAsofColumn(
  j: JoinExpr,
  rightColumn: (e: Expr) => string | undefined,
  ctes: SelectQuery['with'],
  ctx: JoinPlanContext,
): Promise<void> {
  for (const c of conjuncts(j.on)) {
    if (c.kind !== 'Binary' || !['<', '<=', '>', '>='].includes(c.op)) continue;
    const operand =
      rightColumn(c.right) !== undefined ? c.right : rightColumn(c.left) !== undefined ? c.left : undefined;
    if (!operand) continue;
    const sql = ctx.translate({
      kind: 'Select',
      ...(ctes ? { with: ctes } : {}),
      distinct: false,
      columns: [operand],
      from: j.right,
      span: NO_SPAN,
    });
    // Described over empty ranges: every placeholder of the step SQL as 0.
    const d = await ctx.engine.query(`DESCRIBE (${sql.replace(/__TRB_[A-Z0-9_]+?__/g, '0')})`, {
      format: 'JSONCompactEachRow',
    });
    const type = String((JSON.parse(d.text().split('\n')[0] ?? '[]') as unknown[])[1]);
    if (!ORDERED_TYPE.test(type))
      throw err('BAD_TYPE_OF_FIELD', {
        detail: `ASOF JOIN cannot order the right side by ${type} values; its inequality (l.t >= r.t) must compare numbers, dates or datetimes`,
      });
  }
}

/**
 * An aligned enrichment (join-alignment.ts): its left rows filtered to those a step may join, and
 * how a step reads the right side's time.
 */
export function aligned(
  query: SelectQuery,
  j: JoinExpr,
  alignment: Alignment | undefined,
  ctx: JoinPlanContext,
): { query: SelectQuery; align?: NonNullable<EnrichJoin['align']> } {
  const leftAlias = aliasOf(j.left);
  if (!alignment) return { query };
  const ctes = ctesOf(query);
  const viaCte = cteOverOne(j.left, ctes);
  if (j.left.kind !== 'Table' || leftAlias === undefined)
    throw notImplemented(
      `Join alignment (lag_behind) needs the left side of the ${joinName(j)} to be a stream or a CTE named in the FROM`,
    );
  // A left CTE passes its rows' sequence numbers through, for the filter below.
  const cteName = viaCte ? j.left.name : undefined;
  const withSn = query.with?.map((w) => {
    if (w.kind !== 'Cte' || w.name !== cteName || w.query.kind !== 'Select') return w;
    const has = w.query.columns.some((c) => c.kind === 'Identifier' && c.parts.at(-1) === '_tp_sn');
    return has ? w : { ...w, query: { ...w.query, columns: [...w.query.columns, ident('_tp_sn')] } };
  });
  const filter = alignedLeftFilter(alignment, ident(leftAlias, '_tp_sn'));
  const rightTime = ctx.translate({
    kind: 'Select',
    ...(query.with ? { with: query.with } : {}),
    distinct: false,
    columns: [call('to_string', call('max_or_null', nanos(alignment.right)))],
    from: j.right,
    span: NO_SPAN,
  });
  // Where the left rows not joined yet start: the smallest sequence number of those past `until`.
  const pendingSn = ctx.translate({
    kind: 'Select',
    ...(withSn ? { with: withSn } : {}),
    distinct: false,
    columns: [call('to_string', call('min_or_null', ident(leftAlias, '_tp_sn')))],
    from: j.left,
    where: { kind: 'Binary', op: '>', left: nanos(alignment.left), right: num(ALIGN_UNTIL), span: NO_SPAN },
    span: NO_SPAN,
  });
  return {
    query: {
      ...query,
      ...(withSn ? { with: withSn } : {}),
      where: andAll([...conjuncts(query.where), filter]) as Expr,
    },
    align: {
      rightTime: new SqlTemplate(rightTime),
      pendingSn: new SqlTemplate(pendingSn),
      lagNs: alignment.lagNs,
      ...(ctx.quiesceMs !== undefined ? { quiesceMs: ctx.quiesceMs } : {}),
    },
  };
}
