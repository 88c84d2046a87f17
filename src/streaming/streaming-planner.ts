import { randomUUID } from 'node:crypto';
import type { Engine } from '../engine/engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { err } from '../errors/tributary-error.ts';
import type { ResultColumn } from '../queries/query-types.ts';
import {
  andAll,
  conjuncts,
  findAggregates,
  findStreamingFunctions,
  isAggregation,
} from '../sql/analyzer/query-facts.ts';
import { call, ident, num } from '../sql/ast/build.ts';
import type { Expr, FunctionCall, Setting } from '../sql/ast/expression.ts';
import type { FromItem, Query, SelectQuery, TableFunctionRef, WithItem } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { historicalStreamingCall } from '../sql/translator/historical-streaming-functions.ts';
import { monotonicStepSql } from '../sql/translator/monotonic-call.ts';
import type { ResolvedTable, TableResolver } from '../sql/translator/resolver.ts';
import { translateExpression, translateQuery } from '../sql/translator/translate.ts';
import { splitWindowArgs } from '../sql/translator/window-sources.ts';
import { toClickHouseType, toProtonType } from '../sql/types/proton-types.ts';
import { isKvMode, visibleColumns } from '../stream/stream-definition.ts';
import {
  lastVersionsByKey,
  lastVersionsUpTo,
  latestRowsIn,
  latestRowsUpTo,
  rangeSource,
} from '../stream/stream-reads.ts';
import { udaCompaction } from '../udf/uda-compaction.ts';
import { STATE_TABLE, splitAggregation } from './aggregate-split.ts';
import { inlineChangelogCtes } from './changelog-cte-inline.ts';
import { pushChangelogCtesIntoJoin } from './changelog-cte-push.ts';
import { bindChangelogFunctions } from './changelog-input.ts';
import { changelogRowsSql } from './changelog-rows.ts';
import { DedupStates } from './dedup-state.ts';
import { distinctAsDedup } from './distinct-rewrite.ts';
import { applyEmitLast } from './emit-last.ts';
import { followsNestedAggregation, type QueryShape, resolveEmitPolicy } from './emit-policy.ts';
import { requireEventTime } from './event-time-check.ts';
import { flatTailSelect, withRangeMarkers } from './flat-tail.ts';
import { ALIGN_PREV_SN, ALIGN_PREV_UNTIL, ALIGN_UNTIL } from './join-alignment.ts';
import { inlineJoinCte } from './join-cte-inline.ts';
import { joinDeltaOf, leftChangelogStream, qualifiedDelta } from './join-delta.ts';
import type { TailVariant } from './join-inputs.ts';
import { leftJoinTemplates } from './join-left-netting.ts';
import { leftJoinRestriction } from './join-left-touch.ts';
import { type JoinPlan, planJoins } from './join-planner.ts';
import { JOIN_MIN_LEFT, JOIN_MIN_RIGHT, type KeptSide } from './join-program.ts';
import { type JoinSideKind, joinSideSql } from './join-side-read.ts';
import { planKeptSide } from './join-side-state.ts';
import { withJoinSnOnRightSide } from './join-sn-right-side.ts';
import { carryLiteral, carryMarker, rewriteLags } from './lag-rewrite.ts';
import { nestLeftChangelogJoin } from './left-changelog-join-nesting.ts';
import { checkOverCompatibility } from './over-compatibility.ts';
import { nestRangeJoinChain } from './range-join-chain.ts';
import {
  carryDelta,
  feedingChangelog,
  retractCompact,
  retractGoneGroups,
  retractingInput,
  retractNetRows,
} from './retracting-input.ts';
import { isNestedOnlyRetractable, NESTED_CHANGELOG_INPUT, retractableBase } from './retraction.ts';
import { nestSessionJoin } from './session-join-nest.ts';
import { planSession, SESSION_ROWS, SESSION_VERSION, sessionRowsSql } from './session-planner.ts';
import { P, SqlTemplate } from './sql-template.ts';
import { type StartPosition, startPositions } from './start-position.ts';
import { STATE_DB } from './state-table.ts';
import { type BindingContext, type BoundSource, markerName, StreamBinder } from './stream-bindings.ts';
import type { AggregationProgram, ChildProgram, StreamingProgram } from './streaming-program.ts';
import { overToSubstreams, substreamKey } from './substreams.ts';
import { withTableNameQualifiers } from './table-name-qualifiers.ts';
import { topKTiesOrdered } from './top-k-ties.ts';
import {
  changelogTailSource,
  readsVersionedDelta,
  withDeltaColumn,
  withVersionedDelta,
} from './versioned-kv-delta.ts';
import type { WindowShape } from './watermark.ts';
import { intervalOf, type WindowInterval } from './window-interval.ts';
import { checkWindowTime, windowSourceItem } from './window-time-check.ts';

export interface StreamingPlanContext extends BindingContext {
  readonly engine: Engine;
  /** Last committed sn of a stream key (for `latest` starts). */
  committedSn(key: string): number;
}

/** Row-order functions an aggregation's items may call over its emitted rows. */
const ROW_ORDER_FUNCTIONS = new Set(['lag', 'lags', 'neighbor']);

/** Streaming-only functions as the executor runs them. */
function streamingFunction(f: FunctionCall): string {
  switch (f.name.toLowerCase()) {
    case 'emit_version':
      return P.emitVersion;
    case 'earliest_ts':
    case 'earliest_timestamp':
      return "toDateTime64(0, 3, 'UTC')";
    // A tail's monotonic(n) continues from the rows it emitted in earlier steps.
    case 'monotonic':
      return monotonicStepSql(f, P.emitted);
    default:
      throw err('NOT_IMPLEMENTED', {
        detail: `Function ${f.name} is not supported in streaming queries yet`,
      });
  }
}

/** The window table function a streaming aggregation groups by, if any (left-most source of FROM). */
function windowFunction(from: FromItem | undefined): TableFunctionRef | undefined {
  if (!from) return undefined;
  if (from.kind === 'Join' || from.kind === 'ArrayJoin') return windowFunction(from.left);
  if (from.kind === 'TableFunction' && ['tumble', 'hop', 'session'].includes(from.name.toLowerCase()))
    return from;
  return undefined;
}

function windowShape(w: TableFunctionRef): { shape: WindowShape; time: Expr } {
  const name = w.name.toLowerCase();
  const intervals = name === 'hop' ? 2 : name === 'session' ? 2 : 1;
  const args = splitWindowArgs(name, w.args, intervals);
  const time = args.timeColumn ?? ident('_tp_time');
  const iv = args.intervals.map((e, i) => intervalOf(e, `${name}() interval ${i + 1}`));
  if (name === 'tumble') return { shape: { kind: 'tumble', size: iv[0] as WindowInterval }, time };
  if (name === 'hop') {
    const [slide, size] = iv as [WindowInterval, WindowInterval];
    if (!size)
      throw err('BAD_ARGUMENTS', {
        detail: 'hop() needs a slide and a size interval, e.g. hop(s, ts, 1s, 5s)',
      });
    if (slide.unit !== size.unit)
      throw err('BAD_ARGUMENTS', { detail: 'hop() slide and size must use the same interval unit' });
    if (slide.value > size.value)
      throw err('BAD_ARGUMENTS', { detail: 'hop() slide must not be larger than its size' });
    return { shape: { kind: 'hop', slide, size }, time };
  }
  throw err('NOT_IMPLEMENTED', { detail: 'session() windows are not supported in streaming queries yet' });
}

/** Does a nested SELECT (CTE, subquery, view) aggregate over a bound stream? */
function nestedAggregation(q: Query, top: SelectQuery): boolean {
  let found = false;
  const visit = (s: Query, isTop: boolean) => {
    if (s.kind === 'Union') {
      for (const m of s.queries) visit(m, false);
      return;
    }
    if (!isTop && isAggregation(s) && readsBoundSource(s)) found = true;
    for (const w of s.with ?? []) if (w.kind === 'Cte') visit(w.query, false);
    const walkFrom = (f: FromItem | undefined) => {
      if (!f) return;
      if (f.kind === 'Join') {
        walkFrom(f.left);
        walkFrom(f.right);
      } else if (f.kind === 'ArrayJoin') walkFrom(f.left);
      else if (f.kind === 'SubqueryTable') visit(f.query, false);
      else if (f.kind === 'TableFunction')
        for (const a of f.args) if (a.kind === 'Subquery') visit(a.query, false);
    };
    walkFrom(s.from);
  };
  visit(q, q === top);
  return found;
}

function readsBoundSource(s: SelectQuery): boolean {
  return JSON.stringify(s.from ?? {}).includes('__trb_src_');
}

/** SETTINGS keep_versions: versions per key an ASOF join keeps (Proton: 3). */
function keepVersions(settings: readonly Setting[]): number {
  const s = settings.find((x) => x.name.toLowerCase() === 'keep_versions');
  const n = s?.value.kind === 'Number' ? Number(s.value.text) : 3;
  if (!Number.isInteger(n) || n < 1)
    throw err('BAD_ARGUMENTS', { detail: 'keep_versions must be a whole number of versions, at least 1' });
  return n;
}

/** SETTINGS join_quiesce_threshold_ms (a positive number of milliseconds), when given. */
function quiesceMs(settings: readonly Setting[]): { quiesceMs?: number } {
  const s = settings.find((x) => x.name.toLowerCase() === 'join_quiesce_threshold_ms');
  if (!s) return {};
  const n = s.value.kind === 'Number' ? Number(s.value.text) : Number.NaN;
  if (!Number.isInteger(n) || n < 0)
    throw err('BAD_ARGUMENTS', {
      detail: 'join_quiesce_threshold_ms must be a whole number of milliseconds',
    });
  return n > 0 ? { quiesceMs: n } : {};
}

/** Describe a query's result columns, in Proton type names. */
async function describe(engine: Engine, sql: string): Promise<ResultColumn[]> {
  const r = await engine.query(`DESCRIBE (${sql})`, { format: 'JSONCompactEachRow', userSql: true });
  return r
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name, type] = JSON.parse(line) as [string, string];
      return { name, type: toProtonType(type) };
    });
}

/**
 * The flat form of a tail (flat-tail.ts) when it translates with its bounds in place and describes
 * to the same columns as the range-subquery form; otherwise undefined (the subquery form stays).
 */
async function flatTailTemplate(
  engine: Engine,
  select: SelectQuery,
  index: number,
  header: readonly ResultColumn[],
  translateFlat: (q: SelectQuery) => string,
): Promise<SqlTemplate | undefined> {
  const flatSelect = flatTailSelect(select);
  if (!flatSelect) return undefined;
  let text: string | undefined;
  try {
    text = withRangeMarkers(translateFlat(flatSelect), index);
  } catch {
    return undefined;
  }
  if (!text || /__TRB_(?!LO_\d+__|HI_\d+__)/.test(text)) return undefined;
  const flat = new SqlTemplate(text);
  try {
    const columns = await describe(engine, flat.fill({ [P.lo(index)]: 0, [P.hi(index)]: 0 }));
    const same =
      columns.length === header.length &&
      columns.every((c, i) => c.name === header[i]?.name && c.type === header[i]?.type);
    return same ? flat : undefined;
  } catch {
    return undefined;
  }
}

const EMPTY_RANGES = (sources: readonly BoundSource[]) => ({
  ...Object.fromEntries(
    sources.flatMap((s) => [
      [P.lo(s.index), 0],
      [P.hi(s.index), 0],
      [P.start(s.index), -1],
    ]),
  ),
  ...Object.fromEntries(
    sources.flatMap((s) => [
      [P.at(s.index), 0],
      [P.all(s.index), 1],
      [P.sign(s.index), 1],
    ]),
  ),
  [JOIN_MIN_LEFT]: 0,
  [JOIN_MIN_RIGHT]: 0,
  [P.late]: 1,
  [ALIGN_UNTIL]: 0,
  [ALIGN_PREV_UNTIL]: 0,
  [ALIGN_PREV_SN]: 0,
});

/**
 * Plan a streaming query: bind its streams to range reads, classify it (tail, global or window
 * aggregation), resolve its emit policy and start positions, and prepare the SQL of its steps.
 */
export async function planStreamingQuery(query: Query, ctx: StreamingPlanContext): Promise<StreamingProgram> {
  // Engine tables made while planning (join snapshots) are dropped if planning fails.
  const created: string[] = [];
  try {
    return await plan(query, ctx, created);
  } catch (e) {
    for (const t of created) await ctx.engine.query(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
    throw e;
  }
}

async function plan(query: Query, ctx: StreamingPlanContext, created: string[]): Promise<StreamingProgram> {
  if (query.kind === 'Union')
    throw err('NOT_IMPLEMENTED', { detail: 'UNION of streaming queries is not supported yet' });
  const binder = new StreamBinder({
    ...ctx,
    derivedTable: () => `${STATE_DB}.d_${randomUUID().replaceAll('-', '')}`,
  });
  // changelog() of a CTE that only picks a stream's columns reads the stream (changelog-cte-inline.ts).
  // A range join feeding another: the first one runs as its own query (range-join-chain.ts).
  const streamColumns = (db: string | undefined, name: string) => {
    const r = ctx.resolver.resolve(db, name);
    const def = r && !r.bounded && r.kind === 'stream' ? ctx.streamDefinition(r, db, name) : undefined;
    return def ? visibleColumns(def) : undefined;
  };
  // SELECT DISTINCT: each distinct row once across steps, as a dedup() (distinct-rewrite.ts).
  // An aggregation over a LEFT JOIN of changelog inputs: over it as a subquery (left-changelog-join-nesting.ts).
  const isChangelogInput = (db: string | undefined, name: string) => {
    const r = ctx.resolver.resolve(db, name);
    const def = r && !r.bounded && r.kind === 'stream' ? ctx.streamDefinition(r, db, name) : undefined;
    return def ? def.mode !== 'append' : undefined;
  };
  const bound = binder.select(
    nestRangeJoinChain(
      nestLeftChangelogJoin(
        withJoinSnOnRightSide(
          // session(kv, t, 5s) AS a JOIN kv2 ...: the join as a subquery of its own (session-join-nest.ts).
          nestSessionJoin(
            withTableNameQualifiers(
              pushChangelogCtesIntoJoin(inlineChangelogCtes(distinctAsDedup(query))),
            ) as SelectQuery,
            (db, name) => isChangelogInput(db, name) === true,
          ),
        ) as SelectQuery,
        isChangelogInput,
      ),
      streamColumns,
    ),
  );
  const sources = binder.sources;
  if (sources.length === 0)
    throw err('INCORRECT_QUERY', { detail: 'The query reads no stream; run it historically' });
  const children: ChildProgram[] = [];
  for (const s of sources) {
    if (s.kind !== 'derived') continue;
    // A global aggregation feeding an aggregation emits a changelog, which the outer one retracts
    // (when all of its aggregates can; otherwise it reads the emitted rows as appended rows).
    const retracting =
      isAggregation(bound) &&
      findAggregates(bound).every(
        (a) => retractableBase(a.name) !== undefined || isNestedOnlyRetractable(a.name),
      );
    const program = await planStreamingQuery(retracting ? feedingChangelog(s.query) : s.query, ctx);
    const createTable = derivedTableDdl(s.table, program.header);
    // Created now so the outer query can be described; dropped when the query ends (or is disposed).
    await ctx.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
    await ctx.engine.query(createTable);
    children.push({ source: s, program, createTable });
  }
  if (nestedAggregation(bound, bound)) {
    throw err('NOT_IMPLEMENTED', {
      detail:
        'aggregations over streams inside subqueries, CTEs or views (window over window) are not supported yet',
    });
  }

  const limit = bound.limit?.limit.kind === 'Number' ? Number(bound.limit.limit.text) : undefined;
  const settings = bound.settings ?? [];
  const { emit: written, limit: _limit, settings: _settings, format: _format, ...rest } = bound;
  if (written?.last && !written.lastOnProctime) {
    for (const s of sources)
      if (s.kind === 'stream')
        requireEventTime(
          s.definition,
          'EMIT LAST <interval> keeps the rows of the last interval of event time: write EMIT LAST <interval> ON PROCTIME',
        );
  }
  const last = applyEmitLast(rest, written);
  let select: SelectQuery = last.select;
  const emit = last.emit;

  // Start positions: rewind predicates on _tp_time/_tp_sn and `seek_to` (streaming-sql-notes §1.4).
  const starts: StartPosition[] = await startPositions(select, settings, sources, ctx);
  const startAfter = starts.map((s) => s.after);
  let backfill = sources.some(
    (s, i) => s.kind === 'stream' && (startAfter[i] ?? -1) < ctx.committedSn(s.key),
  );
  if (
    emit?.mode === 'CHANGELOG' &&
    findStreamingFunctions(select).some((f) => f.name.toLowerCase() === 'emit_version')
  ) {
    throw err('INCORRECT_QUERY', { detail: 'emit_version() cannot be used with EMIT CHANGELOG' });
  }

  // Proton refuses some mixes of OVER calls and aggregates before anything else (over-compatibility.ts).
  checkOverCompatibility(select);
  select = overToSubstreams(select);
  // A CTE that passes a join through whole, joined on: one chain of joins (join-cte-inline.ts).
  select = inlineJoinCte(select);
  // changelog(s, key...): its source is read as the changelog of its keys (changelog-input.ts).
  const changelogFunctions = bindChangelogFunctions(
    select,
    sources,
    (i) => children.find((c) => c.source.index === i)?.program.header.map((h) => h.name) ?? [],
  );
  select = changelogFunctions.select;
  const conversions = new Map(changelogFunctions.conversions);
  // `append JOIN changelog(s, key)`: s is joined as a versioned_kv stream keyed by `key`.
  const enrichments = changelogFunctions.enrichments;
  const definitionOf = (s: BoundSource) =>
    s.kind === 'stream' ? (enrichments.get(s.index) ?? s.definition) : enrichments.get(s.index);
  // A derived source under changelog() joins as a stream of its table (changelog-derived-side.ts).
  const joinSources: readonly BoundSource[] = sources.map((s) => {
    const def = enrichments.get(s.index);
    if (!def) return s;
    return s.kind === 'stream'
      ? { ...s, definition: def }
      : { kind: 'stream', index: s.index, definition: def, key: s.key };
  });
  const aggregating = isAggregation(select);
  const wf = aggregating ? windowFunction(select.from) : undefined;
  const shape: QueryShape = !aggregating ? 'tail' : wf ? 'window' : 'global';
  const policy = followsNestedAggregation(
    resolveEmitPolicy(emit, shape),
    emit,
    children,
    select.groupBy !== undefined,
  );

  // EMIT CHANGELOG over a versioned_kv stream read alone: its changelog, from its whole history
  // (the latest row per key first, then each new version retracting the previous one).
  const versionedTail =
    policy.changelog && shape === 'tail' ? changelogTailSource(select, sources) : undefined;
  if (versionedTail && !conversions.has(versionedTail.index)) {
    const def = versionedTail.definition;
    conversions.set(versionedTail.index, { from: rangeSource(def), keys: def.keyColumns });
    startAfter[versionedTail.index] = -1;
    if (ctx.committedSn(versionedTail.key) >= 0) backfill = true;
    select = withDeltaColumn(carryDelta(select));
  }

  // EMIT CHANGELOG: `_tp_delta` is produced by the executor; take it out of the select list.
  let changelog: StreamingProgram['changelog'];
  if (policy.changelog && shape !== 'tail') {
    const at = select.columns.findIndex((c) => c.kind === 'Identifier' && c.parts.at(-1) === '_tp_delta');
    const columns = select.columns.filter((_, i) => i !== at);
    select = { ...select, columns };
    changelog = { deltaIndex: at >= 0 ? at : columns.length };
  }

  // Tail rows leave in ingest order: the range read is ordered by `_tp_sn` and tail steps run
  // single-threaded, so filters and projections keep that order.
  const ordered = !aggregating;
  // Sources a join reads as their latest row per key (versioned_kv right sides), set below.
  let latestSources: ReadonlyMap<number, number> = new Map();
  // Right sides of enrichment joins whose rows are kept in an engine table (join-inputs.ts).
  const keptTables = new Map<number, string>();
  let sideReads: ReadonlyMap<number, JoinSideKind> = new Map();
  // The tables of the sides read as their state (join-side-state.ts), by source index.
  const keptSides = new Map<number, KeptSide>();
  // Append right sides of ASOF / LATEST joins: their last rows per join key (join-planner.ts).
  let keyedSources: NonNullable<JoinPlan['keyedSources']> = new Map();
  // Where the query started reading each source (changelog() sides of a join start there).
  const queryStart = [...startAfter];
  // A window over one stream judges lateness insert by insert inside a step (`__TRB_LATE__` in
  // the stream's range read, operators/aggregation-operator.ts insertWatermarksSql), once set below.
  const insertLate: { source?: number; used: boolean } = { used: false };
  // A window over one stream with several shards judges lateness in the stream's range read too,
  // where `_tp_shard` is (the window's own source leaves hidden columns out), once set below.
  const shardLate: { source?: number } = {};
  // A versioned_kv stream read on its own (no join) reads `_tp_delta` as 1 unless converted to
  // its changelog (versioned-kv-delta.ts); set once the joins are planned.
  let plainReads = false;
  const versionedDelta = (s: BoundSource) =>
    plainReads && readsVersionedDelta(s) && !conversions.has(s.index);
  const rangeSql = (s: BoundSource) => {
    const conversion = conversions.get(s.index);
    if (conversion) {
      return changelogRowsSql(conversion, {
        lo: P.lo(s.index),
        hi: P.hi(s.index),
        // Filled at each step with the first run's start: a recovered query keeps the keys'
        // versions from before the RECOVER.
        start: P.start(s.index),
      });
    }
    const side = sideReads.get(s.index);
    const keptSide = keptSides.get(s.index);
    if (side !== undefined && keptSide !== undefined && definitionOf(s))
      return joinSideSql(definitionOf(s)!, s.index, side, keptSide.table);
    const kept = keptTables.get(s.index);
    const keyed = s.kind === 'stream' ? keyedSources.get(s.index) : undefined;
    if (s.kind === 'stream' && kept !== undefined) return latestRowsIn(definitionOf(s)!, kept);
    const versions = s.kind === 'stream' ? latestSources.get(s.index) : undefined;
    if (s.kind === 'stream' && keyed !== undefined)
      return lastVersionsByKey(s.definition, P.lo(s.index), P.hi(s.index), keyed);
    if (s.kind === 'stream' && versions !== undefined) {
      if (versions !== 1) return lastVersionsUpTo(s.definition, P.hi(s.index), versions);
      const latest = latestRowsUpTo(s.definition, P.hi(s.index));
      return versionedDelta(s) ? withVersionedDelta(latest) : latest;
    }
    const late = s.index === insertLate.source || s.index === shardLate.source ? ` AND ${P.late}` : '';
    if (s.index === insertLate.source) insertLate.used = true;
    const delta = versionedDelta(s) ? ', toInt8(1) AS _tp_delta' : '';
    // A stream with several shards: `_tp_shard` (materialized, so `*` does not read it).
    const shard = s.kind === 'stream' && s.definition.shardedStorage ? ', _tp_shard' : '';
    return `(SELECT *, _tp_sn${shard}${delta} FROM ${s.kind === 'stream' ? rangeSource(s.definition, P.lo(s.index)) : s.table} WHERE _tp_sn > ${P.lo(s.index)} AND _tp_sn <= ${P.hi(s.index)}${late}${ordered ? ' ORDER BY _tp_sn' : ''})`;
  };
  const ranged: TableResolver = binder.resolver(rangeSql, versionedDelta);
  // `table(s)` joined with a stream reads its snapshot (join-planner.ts), once planned.
  const snapshots = new Map<string, ResolvedTable>();
  const resolver: TableResolver = {
    ...ranged,
    resolve: (db, name) => (db === undefined ? snapshots.get(name) : undefined) ?? ranged.resolve(db, name),
  };
  // dedup() over a range read keeps its keys across steps (dedup-state.ts).
  const dedups = new DedupStates();
  const streamingDedup = dedups.hook((sql) => /__TRB_LO_\d+__/.test(sql));
  // Conditions in select lists answer `bool` as in historical results (bool-results.ts).
  const translate = (q: SelectQuery, r: TableResolver = resolver) =>
    translateQuery(q, { resolver: r, streamingFunction, streamingDedup, boolResults: true });

  // Joins of streams: refuse what cannot be answered right; plan how each step reads its sides.
  const joins = await planJoins(
    select,
    joinSources,
    {
      engine: ctx.engine,
      keepVersions: keepVersions(settings),
      ...quiesceMs(settings),
      derivedColumns: (i) => children.find((c) => c.source.index === i)?.program.header.map((h) => h.name),
      resolver: ranged,
      translate: (q) => translate(q),
      snapshotTable: () => `${STATE_DB}.s_${randomUUID().replaceAll('-', '')}`,
    },
    !aggregating ? 'tail' : wf?.name.toLowerCase() === 'session' ? 'session' : wf ? 'window' : 'aggregation',
  );
  select = joins.select;
  latestSources = joins.latestSources;
  sideReads = joins.sideReads ?? new Map();
  keyedSources = joins.keyedSources ?? new Map();
  // A join of changelog streams starts from their whole history (their state); changelog(s, k)
  // starts with the query.
  if (joins.program?.kind === 'changelog')
    for (const i of sideReads.keys()) if (!enrichments.has(i)) startAfter[i] = -1;
  // Each side read as its state keeps it in an engine table that each step updates.
  for (const [i, kind] of sideReads) {
    const s = joinSources[i];
    if (s?.kind !== 'stream') continue;
    const table = `${STATE_DB}.j_${randomUUID().replaceAll('-', '')}`;
    // changelog(s, key) starts with the query: none of s's earlier rows are part of its state.
    const after = enrichments.has(i) ? (queryStart[i] ?? -1) : -1;
    const { create, side } = planKeptSide(s.definition, i, kind, table, after, startAfter[i] ?? -1);
    await ctx.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
    created.push(table);
    await ctx.engine.query(create);
    keptSides.set(i, side);
  }
  if (joins.snapshots.length > 0) {
    await ctx.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
    for (const s of joins.snapshots) {
      // Taken now, when the query starts; dropped when it ends (or is disposed).
      created.push(s.table);
      await ctx.engine.query(s.create);
      snapshots.set(s.name, s.resolved);
    }
  }
  const snapshotTables = joins.snapshots.map((s) => s.table);
  let join = joins.program;
  plainReads = !join && joins.snapshots.length === 0;
  if (!join && joins.snapshots.length > 0) {
    // A changelog input joined with table(...): its rows keep their `_tp_delta` through the join;
    // a versioned_kv stream's new version retracts its previous one from the query's start.
    const left = leftChangelogStream(select, sources);
    if (left) {
      const def = left.source.definition;
      if (def.mode === 'versioned_kv' && !conversions.has(left.source.index))
        conversions.set(left.source.index, { from: rangeSource(def), keys: def.keyColumns });
      select = qualifiedDelta(select, left.alias);
    }
  }
  const kvRight = join?.kind === 'enrich' ? joinSources[join.right] : undefined;
  if (
    join?.kind === 'enrich' &&
    kvRight?.kind === 'stream' &&
    latestSources.get(join.right) === 1 &&
    !keyedSources.has(join.right)
  ) {
    // The right side's latest row per key, kept in an engine table that each step updates.
    const table = `${STATE_DB}.k_${randomUUID().replaceAll('-', '')}`;
    // changelog(s, key) starts with the query: none of s's earlier rows are versions yet.
    const after = enrichments.has(join.right) ? (startAfter[join.right] ?? -1) : -1;
    const { create, side } = planKeptSide(
      kvRight.definition,
      join.right,
      'kv',
      table,
      after,
      startAfter[join.right] ?? -1,
    );
    await ctx.engine.query(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(STATE_DB)}`);
    created.push(table);
    await ctx.engine.query(create);
    keptTables.set(join.right, table);
    keptSides.set(join.right, side);
  }
  if (keptSides.size > 0 && (join?.kind === 'enrich' || join?.kind === 'changelog')) {
    snapshotTables.push(...[...keptSides.values()].map((k) => k.table));
    join = { ...join, kept: [...keptSides.values()] };
  }

  if (
    (shape !== 'tail' || join) &&
    findStreamingFunctions(select).some((f) => f.name.toLowerCase() === 'monotonic')
  ) {
    throw err('NOT_IMPLEMENTED', {
      detail:
        'monotonic() is supported in streaming queries without aggregation or join (and in historical ones)',
    });
  }
  if (shape === 'tail') {
    const lags = rewriteLags(select);
    if (lags && join)
      throw err('NOT_IMPLEMENTED', { detail: 'lag() over a join of streams is not supported yet' });
    // A versioned_kv / changelog_kv stream read on its own: the first step is its latest row per
    // key (all of its history up to then), later steps its changes (streaming-sql-notes.md §1.2).
    const only = sources.length === 1 ? sources[0] : undefined;
    const kv =
      !join &&
      !lags &&
      only?.kind === 'stream' &&
      isKvMode(only.definition.mode) &&
      !conversions.has(only.index)
        ? only
        : undefined;
    const variants: Partial<Record<TailVariant, SqlTemplate>> = {};
    if (joins.innerSelect) variants.inner = new SqlTemplate(translate(joins.innerSelect));
    if (kv) {
      latestSources = new Map([[kv.index, 1]]);
      variants.initial = new SqlTemplate(translate(lags?.select ?? select));
      latestSources = new Map();
      startAfter[kv.index] = -1;
    }
    let tail = new SqlTemplate(translate(lags?.select ?? select));
    if (join?.kind === 'changelog' && join.leftJoin) {
      // A LEFT JOIN of changelog inputs sends its rows netted (join-left-netting.ts).
      const columns = await describe(
        ctx.engine,
        tail.fill({ ...EMPTY_RANGES(sources), [P.emitVersion]: 0, [P.emitted]: 0 }),
      );
      const netted = leftJoinTemplates(
        tail.text,
        columns.map((c) => c.name),
        join.sides.map((s) => s.index),
        join.leftJoin.deltaColumn,
        leftJoinRestriction(join.leftJoin.touch, (i) => {
          const source = sources[i];
          const def = source ? definitionOf(source) : undefined;
          const kind = sideReads.get(i);
          const kept = keptSides.get(i);
          return def && kind && kept ? { def, kind, kept: kept.table } : undefined;
        }),
      );
      tail = netted.tail;
      variants.netted = netted.netted;
    }
    const noCarry = Object.fromEntries(
      (lags?.values ?? []).map((v, i) => [carryMarker(i), carryLiteral([], v.depth)]),
    );
    await dedups.create(ctx.engine);
    let header = await describe(
      ctx.engine,
      tail.fill({ ...EMPTY_RANGES(sources), ...noCarry, [P.emitVersion]: 0, [P.emitted]: 0 }),
    );
    // The plainest tails read their stream flat, not through a range subquery (flat-tail.ts).
    if (
      !lags &&
      !join &&
      !kv &&
      !policy.changelog &&
      Object.keys(variants).length === 0 &&
      only?.kind === 'stream' &&
      only.definition.mode === 'append' &&
      conversions.size === 0 &&
      dedups.programs.length === 0 &&
      !/__TRB_(?!LO_0__|HI_0__)/.test(tail.text)
    ) {
      const flat = await flatTailTemplate(ctx.engine, select, only.index, header, (q) =>
        translate(
          q,
          binder.resolver(
            (s) => (s.kind === 'stream' ? rangeSource(s.definition, P.lo(s.index)) : s.table),
            versionedDelta,
          ),
        ),
      );
      if (flat) tail = flat;
    }
    if (policy.changelog && !header.some((h) => h.name === '_tp_delta')) {
      changelog = { deltaIndex: header.length };
      header = [...header, { name: '_tp_delta', type: 'int8' }];
    }
    return {
      shape,
      sources,
      startAfter,
      backfill,
      policy,
      header,
      tail,
      ...(Object.keys(variants).length ? { tailVariants: variants } : {}),
      ...(join ? { join } : {}),
      ...(snapshotTables.length ? { snapshots: snapshotTables } : {}),
      children,
      dedups: dedups.programs,
      ...(lags
        ? {
            lags: {
              // The carried values are read back as literals: the engine's own types.
              carry: new SqlTemplate(
                translateQuery(lags.carry, { resolver, streamingFunction, streamingDedup }),
              ),
              depths: lags.values.map((v) => v.depth),
              keyed: lags.keyed,
            },
          }
        : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(changelog ? { changelog } : {}),
    };
  }

  if (sources.length > 1 && !join)
    throw err('NOT_IMPLEMENTED', { detail: 'aggregations over more than one stream are not supported yet' });
  // An aggregation over a changelog input retracts (retracting-input.ts). A join plans its own
  // kv sides (join-planner.ts).
  // A join of changelog inputs: its rows carry the product of their sides' `_tp_delta`.
  const joinDelta = joins.deltaOf;
  const retract = joinDelta
    ? { index: -1, description: 'a join of changelog inputs', fromStart: false, conversion: undefined }
    : join
      ? undefined
      : retractingInput(sources[0], conversions, (i) =>
          children.find((c) => c.source.index === i)?.program.header.some((h) => h.name === '_tp_delta'),
        );
  if (retract) {
    if (retract.conversion) conversions.set(retract.index, retract.conversion);
    if (retract.fromStart) {
      // The stream's history is its state: read as a backfill (the watermark muted until caught up).
      startAfter[retract.index] = -1;
      const source = sources[retract.index];
      if (source?.kind === 'stream' && ctx.committedSn(source.key) >= 0) backfill = true;
    }
    if (!joinDelta) select = carryDelta(select, retract.description === NESTED_CHANGELOG_INPUT);
  }
  if (wf && wf.name.toLowerCase() === 'session') {
    if (joinDelta)
      throw err('NOT_IMPLEMENTED', {
        detail: `session() windows over ${retract?.description} are supported through a subquery: session((SELECT ... FROM a JOIN b ON ...), t, 5s)`,
      });
    // A session keeps its rows by sequence number; a converted changelog's retraction has the
    // number of the version it takes back (session-changelog-source.ts reads such a stream instead).
    if (retract && (retract.conversion || conversions.has(retract.index)))
      throw err('NOT_IMPLEMENTED', {
        detail: `session() windows over ${retract.description} read through changelog(), a subquery, CTE or view are not supported yet; name the versioned_kv stream itself (session(s, t, 5s)) or join changelog inputs in a subquery`,
      });
    // emit_version() counts emits per substream: each session row carries its substream's version.
    const sessionFunction = (f: FunctionCall) =>
      f.name.toLowerCase() === 'emit_version' ? `any(${SESSION_VERSION})` : streamingFunction(f);
    const session = planSession(
      select,
      wf,
      (q, r = resolver) =>
        translateQuery(q, {
          resolver: r,
          streamingFunction: sessionFunction,
          streamingDedup,
          boolResults: true,
        }),
      resolver,
      // Over a changelog input each session aggregates its rows net of their retractions.
      retract?.description,
    );
    const empty = sessionRowsSql(session.sourceRows.fill(EMPTY_RANGES(sources)), [
      { id: 0, start: 0, end: 0, sns: [-1] },
    ]);
    await dedups.create(ctx.engine);
    const header = await describe(
      ctx.engine,
      session.emit.fill({ ...EMPTY_RANGES(sources), [SESSION_ROWS]: empty, [P.emitVersion]: 0 }),
    );
    return {
      shape,
      sources,
      startAfter,
      backfill,
      policy,
      header,
      session,
      ...(snapshotTables.length ? { snapshots: snapshotTables } : {}),
      children,
      dedups: dedups.programs,
      ...(limit !== undefined ? { limit } : {}),
    };
  }
  if (findAggregates(select).some((a) => a.over !== undefined)) {
    throw err('NOT_IMPLEMENTED', {
      detail: 'aggregate functions with OVER (...) are not supported in streaming queries yet',
    });
  }
  let split = splitAggregation(
    shape === 'global' && !retract && sources[0]?.kind === 'stream' ? topKTiesOrdered(select) : select,
    {
      window: shape === 'window',
      ...(retract ? { retract: retract.description } : {}),
    },
  );
  if (joinDelta) split = { ...split, fold: joinDeltaOf(split.fold, joinDelta) };
  const win = wf ? windowShape(wf) : undefined;

  // The fold: partial states per group, with the batch number and (windows) the late-row filter.
  // Event times as Int64 nanoseconds; the substream key (PARTITION BY, '' without) as a string.
  const timeNs = win ? call('to_unix_timestamp64_nano', call('to_datetime64', win.time, num(9))) : undefined;
  const partition = select.partitionBy ?? [];
  let shardedWindow: number | undefined;
  if (win) {
    await checkWindowTime(ctx.engine, wf as TableFunctionRef, win.time, select.with, async (q) => {
      const sql = translate(q);
      await dedups.create(ctx.engine);
      return sql;
    });
    const only = sources[0];
    if (
      !join &&
      win.shape.kind !== 'session' &&
      sources.length === 1 &&
      only?.kind === 'stream' &&
      namesStream((wf as TableFunctionRef).args[0], only, select.with) &&
      win.time.kind === 'Identifier' &&
      partition.every((e) => e.kind === 'Identifier')
    )
      insertLate.source = only.index;
    // One stream with several shards and no PARTITION BY: one watermark per shard, windows close
    // at the smallest (shard-watermarks.ts). Its plain range read carries `_tp_shard`.
    if (
      !join &&
      win.shape.kind !== 'session' &&
      partition.length === 0 &&
      sources.length === 1 &&
      only?.kind === 'stream' &&
      only.definition.shardedStorage &&
      only.definition.shards > 1 &&
      only.definition.mode === 'append' &&
      !conversions.has(only.index) &&
      isMarkerOf((wf as TableFunctionRef).args[0], only.index) &&
      win.time.kind === 'Identifier'
    ) {
      shardedWindow = only.definition.shards;
      shardLate.source = only.index;
    }
  }
  // The key the window's watermarks are kept by, per row of its source: the shard, or the substream.
  const watermarkKey =
    shardedWindow !== undefined ? call('to_string', ident('_tp_shard')) : substreamKey(partition);
  const foldWhere = andAll([
    ...conjuncts(split.fold.where),
    ...(timeNs
      ? [{ kind: 'Binary', op: '>=', left: timeNs, right: num(P.watermark), span: NO_SPAN } as Expr]
      : []),
  ]);
  const fold: SelectQuery = {
    ...split.fold,
    columns: [
      ...split.fold.columns,
      { kind: 'Alias', expr: call('to_uint64', num(P.batch)), alias: '__batch', span: NO_SPAN },
    ],
    ...(foldWhere ? { where: foldWhere } : {}),
  };
  const foldSql = new SqlTemplate(translate(fold, resolver));
  const emptyFold = foldSql.fill({ ...EMPTY_RANGES(sources), [P.watermark]: 0, [P.batch]: 0 });

  const stateResolver = (stateSql: string): TableResolver => ({
    ...resolver,
    resolve: (db, name) =>
      db === undefined && name === STATE_TABLE
        ? { kind: 'engine_table', engineSql: stateSql }
        : resolver.resolve(db, name),
  });
  let emitSelect = split.emit;
  // Per range: the largest event time per substream (and per insert, `byCommit`).
  const maxTimeSelect = (byCommit: boolean): SelectQuery => ({
    kind: 'Select',
    distinct: false,
    ...(select.with ? { with: select.with } : {}),
    columns: [
      { kind: 'Alias', expr: watermarkKey, alias: '__key', span: NO_SPAN },
      ...(byCommit
        ? [{ kind: 'Alias', expr: num(P.commit), alias: '__commit', span: NO_SPAN } as const]
        : []),
      {
        kind: 'Alias',
        expr: call('to_string', call('max', timeNs as Expr)),
        alias: '__max_ns',
        span: NO_SPAN,
      },
    ],
    from: windowSourceItem(wf as TableFunctionRef),
    groupBy: {
      kind: 'GroupBy',
      items: byCommit ? [ident('__key'), ident('__commit')] : [ident('__key')],
      withTotals: false,
      span: NO_SPAN,
    },
    span: NO_SPAN,
  });
  if (split.windowEnd && !emitSelect.orderBy) {
    emitSelect = {
      ...emitSelect,
      orderBy: [{ kind: 'OrderItem', expr: ident(split.windowEnd), span: NO_SPAN }],
    };
  }
  let goneGroups: SqlTemplate | undefined;
  if (changelog) {
    const key = split.keyColumns.length
      ? call('city_hash64', ...split.keyColumns.map((k) => ident(k)))
      : num(0);
    if (retract && split.keyColumns.length) {
      const gk = translateExpression(key, { resolver, streamingFunction });
      goneGroups = new SqlTemplate(retractGoneGroups(split, gk, '__TRB_STATE__', P.emitFilter));
    }
    emitSelect = {
      ...emitSelect,
      columns: [...emitSelect.columns, { kind: 'Alias', expr: key, alias: '__trb_gk', span: NO_SPAN }],
    };
  }
  // emit_version() counts per substream, and per window of a window aggregation (Proton's
  // emitVersion per substream context): each emitted row carries its substream key and version.
  const stateKey = substreamKey(split.partitionColumns.map((c) => ident(c)));
  const versioned =
    (shape === 'window' || split.partitionColumns.length > 0) &&
    findStreamingFunctions(select).some((f) => f.name.toLowerCase() === 'emit_version');
  let emitFunction = streamingFunction;
  if (versioned) {
    const keySql = translateExpression(stateKey, { resolver, streamingFunction });
    const base = `transform(${keySql}, ${P.versionKeys}, ${P.versionBases}, toUInt64(0))`;
    const version = split.windowEnd
      ? `(${base} + toUInt64(dense_rank() OVER (PARTITION BY ${keySql} ORDER BY ${split.windowEnd})) - 1)`
      : base;
    emitFunction = (f: FunctionCall) =>
      f.name.toLowerCase() === 'emit_version' ? version : streamingFunction(f);
    emitSelect = {
      ...emitSelect,
      columns: [
        ...emitSelect.columns,
        { kind: 'Alias', expr: stateKey, alias: '__trb_evk', span: NO_SPAN },
        { kind: 'Alias', expr: call('emit_version'), alias: '__trb_ev', span: NO_SPAN },
      ],
    };
  }
  // lag(), lags(), neighbor(x, -n) in an aggregation's items read the rows of each emit in the
  // order the emit produces them (the engine's lagInFrame), as in a historical aggregation.
  const beforeRowOrder = emitFunction;
  const rowOrderFunction = (f: FunctionCall, translate: (e: Expr) => string): string => {
    const overRows = ROW_ORDER_FUNCTIONS.has(f.name.toLowerCase()) ? historicalStreamingCall(f) : undefined;
    return overRows ? translate(overRows) : beforeRowOrder(f);
  };
  const emitSql = new SqlTemplate(
    translateQuery(emitSelect, {
      resolver: stateResolver(
        retract
          ? retractNetRows(split, '__TRB_STATE__', P.emitFilter)
          : `(SELECT * FROM __TRB_STATE__ WHERE ${P.emitFilter})`,
      ),
      streamingFunction: rowOrderFunction,
      boolResults: true,
    }),
  );
  const noVersions = { [P.versionKeys]: "['']", [P.versionBases]: '[toUInt64(0)]' };
  await dedups.create(ctx.engine);
  let header = await describe(
    ctx.engine,
    emitSql.fill({
      __TRB_STATE__: `(${emptyFold})`,
      [P.emitFilter]: 1,
      [P.emitVersion]: 0,
      [P.batch]: 0,
      ...noVersions,
    }),
  );
  if (versioned) header = header.filter((h) => h.name !== '__trb_evk' && h.name !== '__trb_ev');
  if (changelog) {
    header = header.filter((h) => h.name !== '__trb_gk');
    header.splice(changelog.deltaIndex, 0, { name: '_tp_delta', type: 'int8' });
  }

  const udaCompact = udaCompaction(split.emit);
  const compactSelect: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: [
      ...split.keyColumns.map((k) => ident(k)),
      ...split.stateColumns.map(
        (a, i): Expr => ({
          kind: 'Alias',
          // JavaScript aggregates keeping a serialized state fold their values into it (src/udf)
          expr: udaCompact.get(a) ?? mergeState(split, i),
          alias: a,
          span: NO_SPAN,
        }),
      ),
      { kind: 'Alias', expr: call('max', ident('__batch')), alias: '__batch', span: NO_SPAN },
    ],
    from: { kind: 'Table', name: STATE_TABLE, span: NO_SPAN },
    ...(split.keyColumns.length
      ? {
          groupBy: {
            kind: 'GroupBy',
            items: split.keyColumns.map((k) => ident(k)),
            withTotals: false,
            span: NO_SPAN,
          },
        }
      : {}),
    span: NO_SPAN,
  };

  const aggregation: AggregationProgram = {
    split,
    versioned,
    fold: foldSql,
    emptyFold,
    emit: emitSql,
    ...(goneGroups ? { goneGroups } : {}),
    ...(udaCompact.size > 0 && !retract ? { compactBeforeCheckpoint: true } : {}),
    compact: (table) =>
      retract
        ? retractCompact(split, table)
        : translateQuery(compactSelect, { resolver: stateResolver(table), protonColumnNames: false }) +
          // a folded JavaScript aggregate state reads the values column the same SELECT replaces
          (udaCompact.size > 0 ? '\nSETTINGS prefer_column_name_to_alias = 1' : ''),
    ...(win && timeNs
      ? {
          window: {
            shape: win.shape,
            ...(policy.shape === 'window' && policy.delay ? { delay: policy.delay } : {}),
            maxTime: new SqlTemplate(sideAsChanges(translate(maxTimeSelect(false)))),
            ...(insertLate.used && insertLate.source !== undefined
              ? {
                  insertLate: {
                    maxTime: new SqlTemplate(translate(maxTimeSelect(true))),
                    timeNsSql: translateExpression(timeNs, { resolver, streamingFunction }),
                  },
                }
              : {}),
            sourceKeySql: translateExpression(watermarkKey, { resolver, streamingFunction }),
            ...(shardedWindow !== undefined
              ? {
                  shards: {
                    count: shardedWindow,
                    timeNsSql: translateExpression(timeNs, { resolver, streamingFunction }),
                  },
                }
              : {}),
            stateKeySql: translateExpression(substreamKey(split.partitionColumns.map((c) => ident(c))), {
              resolver,
              streamingFunction,
            }),
          },
        }
      : {}),
  };
  return {
    shape,
    sources,
    startAfter,
    backfill,
    policy,
    header,
    aggregation,
    ...(join ? { join } : {}),
    ...(snapshotTables.length ? { snapshots: snapshotTables } : {}),
    children,
    dedups: dedups.programs,
    ...(limit !== undefined ? { limit } : {}),
    ...(changelog ? { changelog } : {}),
  };
}

/** The derived table of a nested query: its result columns, its own `_tp_sn`, and `_tp_time`. */
function derivedTableDdl(table: string, header: readonly ResultColumn[]): string {
  const columns = header.map((h) => `${quoteIdent(h.name)} ${toClickHouseType(h.type)}`);
  if (!header.some((h) => h.name === '_tp_time'))
    columns.push("`_tp_time` DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC')");
  columns.push('`_tp_sn` Int64');
  return `CREATE TABLE IF NOT EXISTS ${table} (${columns.join(', ')}) ENGINE = Memory`;
}

/** `sum_merge_state(__a0)`: the merged partial state of a group, for compaction. */
function mergeState(split: ReturnType<typeof splitAggregation>, i: number): Expr {
  const merge = findMerge(split.emit, `__a${i}`);
  if (!merge) return ident(`__a${i}`);
  return { ...merge, name: merge.name.replace(/_merge$/, '_merge_state') };
}

function findMerge(q: SelectQuery, column: string): FunctionCall | undefined {
  let found: FunctionCall | undefined;
  const visit = (v: unknown): void => {
    if (found || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    const n = v as { kind?: string };
    if (n.kind === 'Function') {
      const f = v as FunctionCall;
      const first = f.args[0];
      if (/_merge$/.test(f.name) && first?.kind === 'Identifier' && first.parts[0] === column) {
        found = f;
        return;
      }
    }
    for (const x of Object.values(v)) visit(x);
  };
  visit(q);
  return found;
}

/**
 * A window's watermark over a side of a join of changelog inputs (join-side-read.ts) reads that
 * side's changes in the step's range, as of its end: its new rows.
 */
function sideAsChanges(sql: string): string {
  return sql
    .replace(/__TRB_ALL_(\d+)__/g, '0')
    .replace(/__TRB_AT_(\d+)__/g, '__TRB_HI_$1__')
    .replace(/__TRB_SIGN_(\d+)__/g, '1');
}

/**
 * The window reads the stream itself by its name (`tumble(s, ...)`, `tumble(db.s, ...)`), not a CTE,
 * view or subquery over it: only then do the window's own statements see the stream's `_tp_sn`,
 * which judging lateness insert by insert numbers the inserts with.
 */
/** Whether `arg` is the placeholder of bound source `index` (the window reads that source itself). */
function isMarkerOf(arg: Expr | undefined, index: number): boolean {
  return arg?.kind === 'Identifier' && arg.parts.length === 1 && arg.parts[0] === markerName(index);
}

function namesStream(
  arg: Expr | undefined,
  source: { definition: { db: string; name: string } },
  ctes: readonly WithItem[] | undefined,
): boolean {
  if (arg?.kind !== 'Identifier') return false;
  const { db, name } = source.definition;
  const parts = arg.parts;
  if (parts.length === 1) return parts[0] === name && !ctes?.some((c) => c.kind === 'Cte' && c.name === name);
  return parts.length === 2 && parts[0] === db && parts[1] === name;
}
