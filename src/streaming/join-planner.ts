import type { Engine } from '../engine/engine.ts';
import { err } from '../errors/tributary-error.ts';
import { andAll, conjuncts, isAggregation } from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, Query, SelectQuery } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace, walk } from '../sql/ast/walk.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import { ALIGN_UNTIL, type Alignment, alignedLeftFilter, extractAlignment, nanos } from './join-alignment.ts';
import { type EnrichJoin, JOIN_MIN_LEFT, JOIN_MIN_RIGHT, type JoinProgram } from './join-program.ts';
import { extractRange, hasRangeCondition, type JoinSide, type RangeCondition } from './join-range.ts';
import type { JoinSideKind } from './join-side-read.ts';
import { SqlTemplate } from './sql-template.ts';
import type { BoundSource } from './stream-bindings.ts';

/** What the streaming planner needs to plan a query that joins. */
export interface JoinPlanContext {
  readonly engine: Engine;
  /** SETTINGS keep_versions (versions per key an ASOF join against versioned_kv keeps). */
  readonly keepVersions: number;
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

const MARKER = /__trb_src_(\d+)/g;
const notImplemented = (detail: string) => err('NOT_IMPLEMENTED', { detail });
const STREAM_JOIN_HINT =
  'join two streams with INNER JOIN or LEFT JOIN ... ON <equal keys> [AND date_diff_within(10s, left_time, right_time)]';

/** Every SELECT of a query (nested in FROM, CTEs, expressions), with the CTE bodies by name. */
function ctesOf(q: Query): Map<string, Query> {
  const out = new Map<string, Query>();
  walk(q as AnyNode, (n) => {
    if (n.kind === 'Cte') {
      const c = n as unknown as { name: string; query: Query };
      out.set(c.name, c.query);
    }
    return undefined;
  });
  return out;
}

/** The bound sources an AST node reads (through CTE names too). */
function sourcesIn(node: unknown, ctes: ReadonlyMap<string, Query>, seen = new Set<string>()): Set<number> {
  const out = new Set<number>();
  const text = JSON.stringify(node ?? {});
  for (const m of text.matchAll(MARKER)) out.add(Number(m[1]));
  walk(node as AnyNode, (n) => {
    if (n.kind === 'Table') {
      const t = n as unknown as { database?: string; name: string };
      const body = t.database === undefined ? ctes.get(t.name) : undefined;
      if (body && !seen.has(t.name)) {
        seen.add(t.name);
        for (const s of sourcesIn(body, ctes, seen)) out.add(s);
      }
    }
    return undefined;
  });
  return out;
}

function joinsIn(q: SelectQuery): JoinExpr[] {
  const out: JoinExpr[] = [];
  walk(q as AnyNode, (n) => {
    if (n.kind === 'Join') out.push(n as unknown as JoinExpr);
    return undefined;
  });
  return out;
}

function joinName(j: JoinExpr): string {
  if (j.joinKind === 'COMMA') return 'a comma join (CROSS JOIN)';
  return `${j.joinKind}${j.strictness ? ` ${j.strictness}` : ''} JOIN`;
}

/** The alias a FROM item is known by in its query. */
function aliasOf(item: FromItem): string | undefined {
  if (item.kind === 'Table') return item.alias ?? item.name;
  if (item.kind === 'TableFunction' || item.kind === 'SubqueryTable') return item.alias;
  return undefined;
}

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
      create: `CREATE TABLE ${table} ENGINE = Memory AS SELECT * FROM ${r.engineSql}`,
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
        `A streaming query that reads several streams must join them: ${STREAM_JOIN_HINT}`,
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
  if (derived.some((s) => s.query.kind !== 'Select' || isAggregation(s.query)))
    throw notImplemented(
      'A join of a stream with a streaming aggregation (a subquery, CTE or view that aggregates a stream) is not supported yet',
    );
  if (derived.length > 0 && !(topJoin && sources.length === 2 && hasRangeCondition(topJoin.on)))
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

/** The kv source of a join side that is one versioned_kv / changelog_kv stream, if it is. */
function kvSide(item: FromItem, sources: readonly BoundSource[], ctes: ReadonlyMap<string, Query>) {
  const inside = [...sourcesIn(item, ctes)];
  if (inside.length !== 1 || item.kind !== 'Table') return undefined;
  const s = sources[inside[0] as number];
  if (s?.kind !== 'stream' || s.definition.mode !== 'versioned_kv') return undefined;
  return s.index;
}

/** The source of a join side that is one append stream named in the FROM, if it is. */
function appendSide(item: FromItem, sources: readonly BoundSource[], ctes: ReadonlyMap<string, Query>) {
  const inside = [...sourcesIn(item, ctes)];
  if (inside.length !== 1 || item.kind !== 'Table' || !/^__trb_src_\d+$/.test(item.name)) return undefined;
  const s = sources[inside[0] as number];
  if (s?.kind !== 'stream' || s.definition.mode !== 'append') return undefined;
  return s;
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

/**
 * `_tp_delta` in the select list of a join of changelog inputs: the product of its sides' signs
 * (`a._tp_delta * b._tp_delta ...`, each stream side named by its alias in `aliases`; `every`
 * names all sides, `table(dim)` ones too).
 */
function withDelta(select: SelectQuery, aliases: readonly string[], every: readonly string[]): SelectQuery {
  const product = aliases
    .map((a): Expr => ident(a, '_tp_delta'))
    .reduce((l, r): Expr => ({ kind: 'Binary', op: '*', left: l, right: r, span: NO_SPAN }));
  const delta = (alias: string): Expr => ({
    kind: 'Alias',
    expr: call('to_int8', product),
    alias,
    span: NO_SPAN,
  });
  const columns = select.columns.flatMap((c): Expr[] => {
    // `*`: every side's columns but its `_tp_delta`, then the row's `_tp_delta` once (0027 id 13).
    if (c.kind === 'Asterisk' && !c.qualifier && !c.except?.length)
      return [
        ...every.map(
          (a): Expr => ({
            kind: 'Asterisk',
            qualifier: [a],
            ...(aliases.includes(a) ? { except: ['_tp_delta'] } : {}),
            span: NO_SPAN,
          }),
        ),
        delta('_tp_delta'),
      ];
    const e = c.kind === 'Alias' ? c.expr : c;
    if (e.kind !== 'Identifier' || e.parts.length !== 1 || e.parts[0] !== '_tp_delta') return [c];
    return [delta(c.kind === 'Alias' ? c.alias : '_tp_delta')];
  });
  return { ...select, columns };
}

/**
 * `a.x` where side `a` has no column `x` but exactly one other side has: that side's `x`, as
 * Proton's analyzer resolves it (0014 id 19 writes `a.kk2` for `b.kk2`). Other names unchanged.
 */
function withLenientQualifiers(
  select: SelectQuery,
  sides: readonly { alias: string; columns: ReadonlySet<string> }[],
): SelectQuery {
  return replace(select, (n) => {
    if (n.kind !== 'Identifier') return undefined;
    const parts = (n as unknown as Expr & { kind: 'Identifier' }).parts;
    if (parts.length !== 2) return undefined;
    const [alias, column] = parts as [string, string];
    const side = sides.find((s) => s.alias === alias);
    if (!side || side.columns.has(column)) return undefined;
    const owners = sides.filter((s) => s.columns.has(column));
    if (owners.length !== 1) return undefined;
    return {
      ...(n as object),
      parts: [(owners[0] as { alias: string }).alias, column],
    } as unknown as AnyNode;
  });
}

const WINDOWS = ['tumble', 'hop', 'session'];

/** The join sides of a left-deep chain of joins (`a JOIN b ... JOIN c`), in order. */
function chainOf(item: FromItem): FromItem[] {
  return item.kind === 'Join' ? [...chainOf(item.left), item.right] : [item];
}

/**
 * Joins that read changelog inputs, as a left-deep chain of streams named in the FROM:
 * - an append stream first, then changelog inputs: dynamic enrichment, the later sides read as
 *   their state when a left row comes (join-program.ts EnrichJoin);
 * - changelog inputs only, INNER: a join of changelogs (join-program.ts ChangelogJoin).
 * Anything else is refused, saying what is allowed.
 */
function planChangelogInputs(
  query: SelectQuery,
  sources: readonly BoundSource[],
  streamJoins: readonly JoinExpr[],
  ctx: JoinPlanContext,
  shape: 'tail' | 'aggregation' | 'window' | 'session',
): Omit<JoinPlan, 'snapshots'> {
  const top = query.from;
  const items = top ? chainOf(top) : [];
  const spine: JoinExpr[] = [];
  for (let f = top; f?.kind === 'Join'; f = f.left) spine.push(f);
  // `table(dim)` sides are bounded data, read whole in every part (a snapshot, join-planner.ts).
  const bounded = (item: FromItem) => item.kind === 'TableFunction' && item.name.toLowerCase() === 'table';
  const streamItems = items.filter((item, i) => i === 0 || !bounded(item));
  const sides = streamItems.map((item, i) => {
    // The first side may be a window over its stream (`tumble(s, 5s) AS e JOIN kv ...`).
    const arg =
      item.kind === 'TableFunction' && i === 0 && WINDOWS.includes(item.name.toLowerCase())
        ? item.args[0]
        : undefined;
    const name =
      item.kind === 'Table'
        ? item.name
        : arg?.kind === 'Identifier' && arg.parts.length === 1
          ? arg.parts[0]
          : undefined;
    const m = name ? /^__trb_src_(\d+)$/.exec(name) : null;
    const s = m ? sources[Number(m[1])] : undefined;
    return s?.kind === 'stream' ? s : undefined;
  });
  // Any one-stream FROM item (a subquery, a CTE, a window) JOIN one versioned_kv stream: dynamic
  // enrichment with the right side's latest row per key kept in an engine table.
  const onlyJoin = spine.length === 1 ? (spine[0] as JoinExpr) : undefined;
  const leftReads = onlyJoin ? [...sourcesIn(onlyJoin.left, ctesOf(query))] : [];
  const leftSource = leftReads.length === 1 ? sources[leftReads[0] as number] : undefined;
  const rightSide = items.length === 2 ? sides[1] : undefined;
  if (
    onlyJoin &&
    leftSource?.kind === 'stream' &&
    leftSource.definition.mode === 'append' &&
    rightSide?.definition.mode === 'versioned_kv' &&
    sources.length === 2
  ) {
    if (onlyJoin.strictness === 'LATEST') {
      // The last row per join key among all the stream's rows, as Proton keeps it (a primary
      // key's row that moved to another join key still stands for the old one: 0018_query_state12
      // ids 355, 361): a plain join over one row per key.
      const { keys } = rightJoinKeys(
        onlyJoin,
        rightSide,
        aliasOf(items[1] as FromItem) as string,
        sources,
        ctx,
      );
      return {
        select: query.from === onlyJoin ? { ...query, from: { ...onlyJoin, strictness: 'ALL' } } : query,
        latestSources: new Map(),
        keyedSources: new Map([[rightSide.index, { versions: 1, keys }]]),
        program: { kind: 'enrich', left: leftSource.index, right: rightSide.index },
      };
    }
    const versions = onlyJoin.strictness === 'ASOF' ? ctx.keepVersions : 1;
    const { on, alignment } = extractAlignment(
      onlyJoin.on,
      aliasOf(onlyJoin.left) ?? '',
      aliasOf(items[1] as FromItem) as string,
    );
    if (alignment && onlyJoin.strictness !== 'ASOF')
      throw notImplemented(
        `Join alignment (lag_behind) with a versioned_kv stream is supported for ASOF JOIN; ${joinName(onlyJoin)} meets the latest row per key`,
      );
    const joined = { ...onlyJoin, ...(on ? { on } : {}) };
    const { query: select, align } = aligned(
      query.from === onlyJoin ? { ...query, from: joined } : query,
      onlyJoin,
      alignment,
      ctx,
    );
    if (onlyJoin.strictness === 'ASOF') {
      // Proton keeps the last keep_versions rows per *join* key (HashJoin.h case 4), history
      // included: a key's replaced rows stay versions until newer rows of the join key push
      // them out (0018_query_state12 id 359).
      const rightAlias = aliasOf(items[1] as FromItem) as string;
      const { keys } = rightJoinKeys(joined, rightSide, rightAlias, sources, ctx);
      return {
        select,
        latestSources: new Map(),
        keyedSources: new Map([[rightSide.index, { versions, keys }]]),
        program: {
          kind: 'enrich',
          left: leftSource.index,
          right: rightSide.index,
          ...(align ? { align } : {}),
        },
      };
    }
    return {
      select,
      latestSources: new Map([[rightSide.index, versions]]),
      program: { kind: 'enrich', left: leftSource.index, right: rightSide.index },
    };
  }
  const named = sides.every((s) => s !== undefined) && streamJoins.every((j) => spine.includes(j));
  if (!named || sides.length !== sources.length)
    throw notImplemented(
      'A join of versioned_kv, changelog_kv or changelog streams (or changelog()) is supported as a chain of streams named in the FROM (a JOIN b ON ... JOIN c ON ...), not through subqueries, CTEs or views yet',
    );
  const streams = sides as Extract<BoundSource, { kind: 'stream' }>[];
  const select = withLenientQualifiers(
    query,
    streamItems.map((item, i) => ({
      alias: aliasOf(item) as string,
      columns: new Set([...(streams[i]?.definition.columns.map((c) => c.name) ?? []), '_tp_time', '_tp_sn']),
    })),
  );
  const kindOf = (s: (typeof streams)[number]): JoinSideKind | 'append' =>
    s.definition.mode === 'append' ? 'append' : s.definition.mode === 'changelog' ? 'rows' : 'kv';
  const kinds = streams.map(kindOf);
  for (const j of spine) {
    if (hasRangeCondition(j.on))
      throw notImplemented(
        'A join with a versioned_kv, changelog_kv or changelog stream takes no time range (date_diff_within)',
      );
  }
  const first = streams[0] as (typeof streams)[number];
  if (kinds[0] === 'append') {
    const appendLater = kinds.slice(1).indexOf('append');
    if (appendLater >= 0)
      throw notImplemented(
        `An append stream joined with changelog inputs must come first and alone (a JOIN kv_b JOIN kv_c); ${streams[appendLater + 1]?.definition.name} is an append stream after a changelog input`,
      );
    for (const j of spine) {
      if (j.strictness && j.strictness !== 'ALL' && !bounded(j.right))
        throw notImplemented(
          `${joinName(j)} is supported with one versioned_kv stream on the right only; use INNER JOIN or LEFT JOIN`,
        );
    }
    const states = streams.slice(1).map((s) => s.index);
    return {
      select,
      latestSources: new Map(),
      sideReads: new Map(streams.slice(1).map((s, i) => [s.index, kinds[i + 1] as JoinSideKind])),
      program: { kind: 'enrich', left: first.index, right: states[0] as number, states },
    };
  }
  const append = streams.find((s) => kindOf(s) === 'append');
  if (append)
    throw notImplemented(
      `An append stream (${append.definition.name}) joins changelog inputs only as the first (left-most) side of the join, as a dynamic enrichment`,
    );
  for (const j of spine) {
    // A bounded right side (table(dim)) joins each change on its own: INNER or LEFT.
    const kinds = bounded(j.right) ? ['INNER', 'LEFT'] : ['INNER'];
    if (!kinds.includes(j.joinKind) || (j.strictness && j.strictness !== 'ALL'))
      throw notImplemented(
        `${joinName(j)} of versioned_kv, changelog_kv or changelog streams is not supported yet; INNER JOIN ... ON <keys> is`,
      );
  }
  if (shape === 'window' || shape === 'session')
    throw notImplemented(
      'Window aggregations over a join of versioned_kv, changelog_kv or changelog streams are not supported yet; aggregate globally',
    );
  const aliases = streamItems.map((item) => aliasOf(item) as string);
  return {
    select: withDelta(
      select,
      aliases,
      items.map((item) => aliasOf(item) as string),
    ),
    latestSources: new Map(),
    sideReads: new Map(streams.map((s, i) => [s.index, kinds[i] as JoinSideKind])),
    program: {
      kind: 'changelog',
      sides: streams.map((s, i) => ({ index: s.index, kind: kinds[i] as JoinSideKind })),
    },
    ...(shape === 'aggregation' ? { deltaOf: aliases } : {}),
  };
}

function withJoinKind(select: SelectQuery, j: JoinExpr, kind: 'INNER'): SelectQuery {
  return select.from === j ? { ...select, from: { ...j, joinKind: kind } } : select;
}

/** The columns a FROM item brings, by name (undefined when not known). */
function columnsOf(
  item: FromItem,
  sources: readonly BoundSource[],
  ctx: JoinPlanContext,
): Set<string> | undefined {
  const ofSource = (name: string): Set<string> | undefined => {
    const m = /^__trb_src_(\d+)$/.exec(name);
    const s = m ? sources[Number(m[1])] : undefined;
    if (s?.kind === 'derived') {
      const names = ctx.derivedColumns?.(s.index);
      return names ? new Set([...names, '_tp_time', '_tp_sn']) : undefined;
    }
    if (s?.kind !== 'stream') return undefined;
    return new Set([...s.definition.columns.map((c) => c.name), '_tp_time', '_tp_sn']);
  };
  if (item.kind === 'Table') return ofSource(item.name);
  if (item.kind === 'TableFunction') {
    const arg = item.args[0];
    const base = arg?.kind === 'Identifier' ? ofSource(arg.parts.at(-1) as string) : undefined;
    return base ? new Set([...base, 'window_start', 'window_end']) : undefined;
  }
  if (item.kind === 'SubqueryTable' && item.query.kind === 'Select') {
    const out = new Set<string>();
    for (const c of item.query.columns) {
      if (c.kind === 'Alias') out.add(c.alias);
      else if (c.kind === 'Identifier') out.add(c.parts.at(-1) as string);
      else if (c.kind === 'Asterisk' && item.query.from) {
        const inner = columnsOf(item.query.from, sources, ctx);
        if (!inner) return undefined;
        for (const n of inner) out.add(n);
      }
    }
    return out;
  }
  return undefined;
}

async function planRangeJoin(
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

/**
 * Append stream ASOF / LATEST JOIN append stream (Proton's HashJoin cases 5 and 7, §1.9): a
 * dynamic enrichment. Only left rows make output; the right side is kept as its last
 * `keep_versions` rows per join key (ASOF: the closest of them by the ON inequality) or its last
 * row per join key (LATEST), among the rows it received since the query started.
 */
/**
 * The right stream's columns that an ASOF / LATEST join's equal keys name (`ON l.k = r.k`), by
 * which the right side keeps its versions; and how an ON operand names a right column.
 */
function rightJoinKeys(
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

async function planVersionedEnrichment(
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

/** A FROM item naming a CTE whose body is a plain SELECT (no aggregation, join or window). */
function cteOverOne(item: FromItem, ctes: ReadonlyMap<string, Query>): boolean {
  const body = item.kind === 'Table' && item.database === undefined ? ctes.get(item.name) : undefined;
  return (
    body?.kind === 'Select' &&
    !isAggregation(body) &&
    body.from?.kind === 'Table' &&
    !body.limit &&
    !body.limitBy &&
    !body.orderBy?.length
  );
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
function aligned(
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
    },
  };
}
