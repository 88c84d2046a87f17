import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import { conjuncts, isAggregation } from '../sql/analyzer/query-facts.ts';
import { num } from '../sql/ast/build.ts';
import type { FromItem, JoinExpr, Query, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import {
  appendSide,
  cteOverOne,
  ctesOf,
  joinName,
  joinsIn,
  kvSide,
  notImplemented,
  sourcesIn,
} from './join-ast.ts';
import { planChangelogInputs } from './join-plan-changelog.ts';
import { planVersionedEnrichment } from './join-plan-keyed.ts';
import { planRangeJoin } from './join-plan-range.ts';
import type { JoinProgram } from './join-program.ts';
import { extractRange, hasRangeCondition } from './join-range.ts';
import type { JoinSideKind } from './join-side-read.ts';
import type { BoundSource } from './stream-bindings.ts';

/** What the streaming planner needs to plan a query that joins. */
export interface JoinPlanContext {
  readonly engine: Engine;
  /** SETTINGS keep_versions (versions per key an ASOF join against versioned_kv keeps). */
  readonly keepVersions: number;
  /** SETTINGS join_quiesce_threshold_ms, when given (join-program.ts EnrichJoin.align.quiesceMs). */
  readonly quiesceMs?: number;
  readonly resolver: TableResolver;
  /** The result columns of a derived source (a nested streaming query). */
  derivedColumns?(index: number): readonly string[] | undefined;
  /** Translate a bound SELECT to engine SQL (with the query's range reads). */
  translate(q: SelectQuery): string;
}

/** The join part of a streaming plan. */
export interface JoinPlan {
  /** The query to run: range conditions turned into engine conditions and per-part filters. */
  readonly select: SelectQuery;
  /** LEFT JOIN of two streams: the same query joined INNER (for the parts right rows trigger). */
  readonly innerSelect?: SelectQuery;
  /**
   * Sources read as their last rows per primary key up to the step (versioned_kv right sides), to
   * how many versions are kept: 1 for INNER/LEFT (the latest row), `keep_versions` for ASOF.
   */
  readonly latestSources: ReadonlyMap<number, number>;
  /**
   * Sources read as changelog sides (join-side-read.ts): the sides of a join of changelog inputs,
   * and the sides after the first of a many-sided enrichment.
   */
  readonly sideReads?: ReadonlyMap<number, JoinSideKind>;
  /** An aggregation over a join of changelog inputs: the side aliases whose `_tp_delta` multiply. */
  readonly deltaOf?: readonly string[];
  /**
   * Append right sides of ASOF / LATEST joins (Proton's HashJoin cases 5 and 7): read as the last
   * `versions` rows per join key (`keys`, the right side's columns) among its rows since the query
   * started, up to the step.
   */
  readonly keyedSources?: ReadonlyMap<
    number,
    { readonly versions: number; readonly keys: readonly string[] }
  >;
  /** How to fill the step's SQL per part; undefined when the query reads one stream. */
  readonly program?: JoinProgram;
  /** `table(s)` joined with a stream: read once into an engine table when the query starts. */
  readonly snapshots: readonly Snapshot[];
}

/**
 * The right side of a stream JOIN table(s), as the query started (Proton builds the hash table of
 * a bounded right side once; a changing right side is what versioned_kv enrichment is for).
 */
export interface Snapshot {
  /** The name the query now reads it by (resolved to `resolved`). */
  readonly name: string;
  /** The engine table holding it, and the statement that fills it. */
  readonly table: string;
  readonly create: string;
  readonly resolved: ResolvedTable;
}

const STREAM_JOIN_HINT =
  'join two streams with INNER JOIN or LEFT JOIN ... ON <equal keys> [AND date_diff_within(10s, left_time, right_time)]';

/**
 * Plan the joins of a bound streaming query (streaming-sql-notes.md §1.9). Shapes that work:
 * a stream joined with bounded data (`table(dim)`, a bounded view) INNER, LEFT or CROSS;
 * append streams joined INNER (any number, a stream with itself too) or LEFT (two), with or
 * without a time range; an append stream joined INNER or LEFT with a versioned_kv stream.
 * Every other shape is refused with an error that says what is allowed, never answered wrongly.
 */
export async function planJoins(
  select: SelectQuery,
  sources: readonly BoundSource[],
  ctx: JoinPlanContext & { snapshotTable(): string },
  shape: 'tail' | 'aggregation' | 'window' | 'session',
): Promise<JoinPlan> {
  const plan = await planStreamJoins(select, sources, ctx, shape);
  const snapshots: Snapshot[] = [];
  const ctes = ctesOf(plan.select);
  const targets = new Set<unknown>();
  for (const j of joinsIn(plan.select)) {
    if (sourcesIn(j.left, ctes).size > 0 && sourcesIn(j.right, ctes).size === 0) targets.add(j.right);
  }
  const rewritten = replace(plan.select, (n) => {
    if (!targets.has(n) || n.kind !== 'TableFunction') return undefined;
    const f = n as unknown as FromItem & { kind: 'TableFunction' };
    const arg = f.args[0];
    if (
      f.name.toLowerCase() !== 'table' ||
      f.args.length !== 1 ||
      arg?.kind !== 'Identifier' ||
      arg.parts.length > 2
    )
      return undefined;
    const [db, name] =
      arg.parts.length === 2 ? [arg.parts[0], arg.parts[1] as string] : [undefined, arg.parts[0] as string];
    if (db === undefined && ctes.has(name)) return undefined;
    const r = ctx.resolver.resolve(db, name);
    if (!r || (r.kind !== 'stream' && r.kind !== 'materialized_view')) return undefined;
    const table = ctx.snapshotTable();
    const ref = `__trb_snapshot_${snapshots.length}`;
    // Tributary's own table, not a user-named engine table: no database, so the engine allow-list
    // (which refuses engine tables outside its list) is not asked about it.
    const { database: _database, ...stream } = r;
    snapshots.push({
      name: ref,
      table,
      create: `CREATE TABLE ${table} ENGINE = Memory AS SELECT * FROM ${r.joinRightSql ?? r.engineSql}`,
      resolved: { ...stream, kind: 'engine_table', engineSql: table },
    });
    return { kind: 'Table', name: ref, alias: f.alias ?? name, span: f.span } as unknown as AnyNode;
  });
  return { ...plan, select: rewritten, snapshots };
}

async function planStreamJoins(
  select: SelectQuery,
  sources: readonly BoundSource[],
  ctx: JoinPlanContext,
  shape: 'tail' | 'aggregation' | 'window' | 'session',
): Promise<Omit<JoinPlan, 'snapshots'>> {
  const ctes = ctesOf(select);
  const joins = joinsIn(select);
  const streamJoins: JoinExpr[] = [];
  for (const j of joins) {
    const left = sourcesIn(j.left, ctes);
    const right = sourcesIn(j.right, ctes);
    if (left.size === 0 && right.size === 0) continue;
    const range = hasRangeCondition(j.on);
    if (left.size > 0 && right.size > 0) {
      if ([...left].some((i) => right.has(i)))
        throw notImplemented(
          'Both sides of this join read the same stream through one CTE or view; name the stream on each side (FROM s AS a JOIN s AS b) to join a stream with itself',
        );
      streamJoins.push(j);
      continue;
    }
    // A stream with bounded data: each step joins the new rows with the data as it is then.
    if (range) {
      throw notImplemented(
        `A time range (date_diff_within, date_diff ... BETWEEN) needs a stream on both sides of the join; a join with table(...) or a bounded view cannot use one`,
      );
    }
    if (right.size === 0 && !['INNER', 'LEFT', 'CROSS', 'COMMA'].includes(j.joinKind)) {
      throw notImplemented(
        `${joinName(j)} of a stream with bounded data is not supported: a stream joins table(...) or a bounded view with INNER, LEFT or CROSS JOIN`,
      );
    }
    if (left.size === 0 && !['INNER', 'CROSS', 'COMMA'].includes(j.joinKind)) {
      throw notImplemented(
        `${joinName(j)} of bounded data with a stream is not supported: put the stream on the left, e.g. stream LEFT JOIN table(dim)`,
      );
    }
  }
  const streamSources = sources.filter((s) => s.kind === 'stream');
  if (streamJoins.length === 0) {
    if (sources.length > 1)
      throw notImplemented(
        joins.length > 0
          ? 'This join of streams inside a subquery or CTE is not supported yet: a nested join runs as a range join feeding a range join, or as a join of versioned_kv / changelog_kv / changelog streams named in its FROM (not changelog() of CTEs) read by an aggregation; otherwise write the join in the FROM of the query'
          : `A streaming query that reads several streams must join them: ${STREAM_JOIN_HINT}`,
      );
    return { select, latestSources: new Map() };
  }
  for (const j of streamJoins) {
    // A malformed range is reported first (code 62), whatever the join kind, as Proton does.
    if (hasRangeCondition(j.on))
      extractRange(conjuncts(j.on), () => undefined, { left: num(0), right: num(0) });
    checkStreamJoin(j, sources, ctes);
  }
  const top = select.from;
  const topJoin = top?.kind === 'Join' && streamJoins.includes(top) ? top : undefined;
  // A derived side (its own query) joins only as a range join's side: a range join feeding another.
  const derived = sources.filter((s) => s.kind === 'derived');
  if (streamJoins.some((j) => changelogOfDerived(j.left, sources) || changelogOfDerived(j.right, sources)))
    throw notImplemented(
      'This join of changelog() of a CTE, subquery or view is not supported yet: a join takes changelog(r, key...) of such a query without a version column (drop_late_rows), as a side of a chain of changelog inputs (changelog(r1, id) JOIN changelog(r2, id) ON ...)',
    );
  // A streaming aggregation (its emitted rows) JOIN one versioned_kv stream: dynamic enrichment,
  // each emitted row meeting the latest row of its key (join-plan-changelog.ts).
  const enrichesAggregation = topJoin !== undefined && isDerivedKvEnrichment(topJoin, sources, ctes);
  if (!enrichesAggregation && derived.some((s) => s.query.kind !== 'Select' || isAggregation(s.query)))
    throw notImplemented(
      'A join of a stream with a streaming aggregation (a subquery, CTE or view that aggregates a stream) is not supported yet',
    );
  if (
    derived.length > 0 &&
    !enrichesAggregation &&
    !(topJoin && sources.length === 2 && hasRangeCondition(topJoin.on))
  )
    throw notImplemented(
      'A join of a stream with a streaming subquery is supported as a range join of the two (date_diff_within) only',
    );

  // Changelog inputs (versioned_kv, changelog_kv, changelog streams, changelog()) in the join.
  if (streamSources.some((s) => s.kind === 'stream' && s.definition.mode !== 'append')) {
    return planChangelogInputs(select, sources, streamJoins, ctx, shape);
  }
  const keyed = streamJoins.find((j) => j.strictness === 'ASOF' || j.strictness === 'LATEST');
  if (keyed) {
    if (!topJoin || keyed !== topJoin || sources.length !== 2 || shape === 'window' || shape === 'session')
      throw notImplemented(
        `${joinName(keyed)} of two streams is supported between two streams only, as the outermost join of the query, without a window; e.g. FROM l ASOF JOIN r ON l.k = r.k AND l.t >= r.t`,
      );
    if (hasRangeCondition(keyed.on))
      throw notImplemented(
        `${joinName(keyed)} of two streams takes no time range (date_diff_within); use ON l.k = r.k AND l.t >= r.t`,
      );
    return await planVersionedEnrichment(select, keyed, sources, ctes, ctx);
  }
  const leftJoin = streamJoins.some((j) => j.joinKind === 'LEFT');
  const ranged = streamJoins.filter((j) => hasRangeCondition(j.on));
  if (leftJoin || ranged.length > 0) {
    if (!topJoin || streamJoins.length !== 1 || sources.length !== 2)
      throw notImplemented(
        'LEFT JOIN and range joins (date_diff_within) of streams are supported between two streams only, as the outermost join of the query',
      );
    if (leftJoin && shape !== 'tail')
      throw notImplemented(
        'Aggregations over a LEFT JOIN of two streams are not supported yet; use INNER JOIN',
      );
  }
  if (shape === 'window' || shape === 'session')
    throw notImplemented(
      'Window aggregations over a join of two streams are not supported yet; join a stream with table(...) or aggregate globally',
    );
  const order = sources.map((s) => s.index);
  if (ranged.length === 0 || !topJoin) {
    return {
      select,
      ...(leftJoin && topJoin ? { innerSelect: withJoinKind(select, topJoin, 'INNER') } : {}),
      latestSources: new Map(),
      program: { kind: 'expand', sources: order, ...(leftJoin ? { leftJoin: true } : {}) },
    };
  }
  return planRangeJoin(select, topJoin, sources, ctes, ctx, leftJoin);
}

/** Kinds and strictness a join of two streams may have (Proton: RIGHT, FULL and CROSS are refused). */
function checkStreamJoin(
  j: JoinExpr,
  sources: readonly BoundSource[],
  ctes: ReadonlyMap<string, Query>,
): void {
  if (!['INNER', 'LEFT'].includes(j.joinKind)) {
    throw notImplemented(`${joinName(j)} of two streams is not supported; ${STREAM_JOIN_HINT}`);
  }
  if (j.strictness && j.strictness !== 'ALL') {
    const kv =
      kvSide(j.right, sources, ctes) !== undefined ||
      appendSide(j.right, sources, ctes) !== undefined ||
      cteOverOne(j.right, ctes);
    if (!kv || !['ASOF', 'LATEST'].includes(j.strictness))
      throw notImplemented(`${joinName(j)} of two streams is not supported yet; ${STREAM_JOIN_HINT}`);
  }
  if (!j.on && !j.using?.length)
    throw err('INVALID_JOIN_ON_EXPRESSION', {
      detail: `A join of two streams needs ON or USING with at least one equal key; ${STREAM_JOIN_HINT}`,
    });
}

function withJoinKind(select: SelectQuery, j: JoinExpr, kind: 'INNER'): SelectQuery {
  return select.from === j ? { ...select, from: { ...j, joinKind: kind } } : select;
}

/** `changelog(<derived source>, key...)` as a side of a join: a CTE, subquery or view run as its own query. */
function changelogOfDerived(item: FromItem, sources: readonly BoundSource[]): boolean {
  if (item.kind !== 'TableFunction' || item.name.toLowerCase() !== 'changelog') return false;
  const first = item.args[0];
  const m =
    first?.kind === 'Identifier' && first.parts.length === 1
      ? /^__trb_src_(\d+)$/.exec(first.parts[0] as string)
      : null;
  return m !== null && sources[Number(m[1])]?.kind === 'derived';
}

/**
 * `agg JOIN kv ON ...` (INNER or LEFT, no range): the left side reads one derived source (a nested
 * streaming query, e.g. a CTE that aggregates a tumble window) and the right side is one
 * versioned_kv stream, the only two sources of the query.
 */
function isDerivedKvEnrichment(
  j: JoinExpr,
  sources: readonly BoundSource[],
  ctes: ReadonlyMap<string, Query>,
): boolean {
  if (sources.length !== 2 || !['INNER', 'LEFT'].includes(j.joinKind) || hasRangeCondition(j.on))
    return false;
  if (j.strictness && j.strictness !== 'ALL') return false;
  const left = [...sourcesIn(j.left, ctes)];
  const right = [...sourcesIn(j.right, ctes)];
  const l = left.length === 1 ? sources[left[0] as number] : undefined;
  const r = right.length === 1 ? sources[right[0] as number] : undefined;
  return l?.kind === 'derived' && r?.kind === 'stream' && r.definition.mode === 'versioned_kv';
}
