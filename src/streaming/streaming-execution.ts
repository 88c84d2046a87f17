import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { Engine } from '../engine/engine.ts';
import { guardedEngine } from '../engine/guarded-engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { userSqlEngine } from '../engine/user-sql-engine.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { QueryAnalysis, ResultColumn } from '../queries/query-types.ts';
import { rowsFromLines, wideIntegerColumns } from '../queries/row-codec.ts';
import { DerivedRanges } from './derived-ranges.ts';
import { type StepInputs, type StepPart, stepInputs, unionOf } from './join-inputs.ts';
import { carryLiteral, carryMarker, keyedCarryLiteral } from './lag-rewrite.ts';
import type { ExecutionProgress, PipelineStep, ResultSink } from './result-sink.ts';
import { SESSION_ROWS, sessionRowsSql } from './session-planner.ts';
import { type Session, type SessionRow, SessionTracker } from './session-tracker.ts';
import { type CommittedRanges, SourceCursor } from './source-cursor.ts';
import { P } from './sql-template.ts';
import { StateTable } from './state-table.ts';
import type { StreamingProgram } from './streaming-program.ts';
import { SubstreamWatermarks } from './substream-watermarks.ts';
import { intervalMillis } from './window-interval.ts';
import { millisFromNanos } from './window-time.ts';

/** Rows a single step reads at most (a long backfill runs as several steps). */
const MAX_STEP_ROWS = 1_000_000;
/** Compact the state table after this many folds. */
const COMPACT_EVERY = 64;

interface StepStats {
  name: string;
  calls: number;
  ns: number;
  bytes: number;
}

/**
 * Runs a streaming query (DESIGN.md §5): waits for committed ranges of its sources, runs its steps
 * over each new range, and emits per its policy until canceled or its LIMIT is reached. All state
 * lives in engine tables that are dropped when the query ends.
 */
export class StreamingExecution implements RowsPlan {
  readonly kind = 'rows';
  readonly streaming = true;
  readonly header: ResultColumn[];
  private readonly wide: number[];
  private readonly progressStats: ExecutionProgress = { scannedRows: 0, scannedBytes: 0, lastEventTime: 0 };
  private readonly steps = new Map<string, StepStats>();
  private emitted = 0;
  private emitVersion = 0;
  private batch = 0;
  private wake: (() => void) | undefined;
  private status = 'pending';
  private readonly watermark: SubstreamWatermarks | undefined;
  private readonly sessions: SessionTracker | undefined;
  /** Emits per substream so far (emit_version() of session windows). */
  private readonly substreamVersions = new Map<string, number>();
  /** Last emitted row per group, for EMIT CHANGELOG retractions. */
  private readonly lastEmitted = new Map<string, unknown[]>();

  /** The engine, each statement holding the flush locks of the streams this query reads. */
  private readonly engine: Engine;
  /** What each step reads: the sources' new ranges, or a join's parts. */
  private readonly inputs: StepInputs;

  constructor(
    private readonly rawEngine: Engine,
    private readonly ranges: CommittedRanges,
    readonly program: StreamingProgram,
    readonly analysis: QueryAnalysis,
    /** Streams read other than the sources (e.g. `table(s)` joined in). */
    private readonly alsoReads: readonly string[] = [],
  ) {
    const keys = [...new Set([...program.sources.map((s) => s.key), ...alsoReads])].filter(
      (k) => !DerivedRanges.isDerivedKey(k),
    );
    // Reading steps carry SQL derived from the user's query: they run under the engine's readonly.
    const engine = userSqlEngine(rawEngine);
    this.engine = keys.length > 0 ? guardedEngine(engine, (work) => ranges.read(keys, work)) : engine;
    this.inputs = stepInputs(
      program.join,
      program.startAfter,
      this.engine,
      program.tailVariants?.initial !== undefined,
    );
    this.header = program.header;
    this.wide = wideIntegerColumns(program.header);
    const w = program.aggregation?.window;
    this.watermark = w ? new SubstreamWatermarks(w.shape, w.delay) : undefined;
    const policy = program.policy;
    this.sessions = program.session
      ? new SessionTracker({
          ...program.session.options,
          delayMs: policy.shape === 'window' && policy.delay ? intervalMillis(policy.delay) : 0,
        })
      : undefined;
  }

  async run(sink: ResultSink, signal: AbortSignal): Promise<void> {
    const p = this.program;
    const ranges = new DerivedRanges(this.ranges);
    const childAbort = new AbortController();
    const children: Promise<void>[] = [];
    let cursors: SourceCursor[] = [];
    const state = p.aggregation ? new StateTable(this.engine, 'q') : undefined;
    const onAbort = () => {
      childAbort.abort();
      this.wake?.();
    };
    signal.addEventListener('abort', onAbort);
    this.status = 'running';
    let childFailure: unknown;
    try {
      // Nested queries run alongside, each writing into its derived table.
      for (const child of p.children) {
        await this.engine.query(child.createTable);
        const execution = new StreamingExecution(
          this.rawEngine,
          this.ranges,
          child.program,
          this.analysis,
          this.alsoReads,
        );
        const into = this.derivedSink(child.source.table, child.source.key, child.program.header, ranges);
        children.push(
          execution.run(into, childAbort.signal).catch((e: unknown) => {
            childFailure = e;
            this.wake?.();
          }),
        );
      }
      cursors = p.sources.map(
        (s, i) => new SourceCursor(s, p.startAfter[i] ?? -1, ranges, () => this.wake?.()),
      );
      if (state && p.aggregation) await state.create(p.aggregation.emptyFold);
      const policy = p.policy;
      const periodicMs = policy.shape !== 'tail' ? policy.periodicMs : undefined;
      const timeoutMs = policy.shape === 'window' ? policy.timeoutMs : undefined;
      let nextPeriodic = periodicMs ? Date.now() + periodicMs : Number.POSITIVE_INFINITY;
      let lastRowsAt = Date.now();
      let newSinceEmit = false;
      // Only a query told to start in the past backfills; rows committed while it was being
      // planned are live rows.
      let backfill = p.backfill && cursors.some((c) => c.pending > 0);

      while (!signal.aborted && !this.limitReached()) {
        if (childFailure) throw childFailure;
        const pending = cursors.filter((c) => c.pending > 0);
        if (pending.length > 0) {
          const hadRows = await this.step(cursors, state, sink, backfill);
          const wasBackfill = backfill;
          backfill = backfill && cursors.some((c) => c.pending > 0);
          // The backfill is over: emit what it made final at once (Proton's processAfterUnmuted).
          if (wasBackfill && !backfill && state) await this.afterBackfill(state, sink);
          if (hadRows) {
            newSinceEmit = true;
            lastRowsAt = Date.now();
          }
          continue;
        }
        backfill = false;
        const now = Date.now();
        if (now >= nextPeriodic) {
          // At least 1 ms ahead: a period below the clock's grain (`1us`, `1ns`, accepted as in
          // Proton) runs every millisecond instead of re-arming in the past and spinning.
          nextPeriodic = now + Math.max(periodicMs ?? 0, 1);
          if (newSinceEmit && state) {
            newSinceEmit = false;
            await this.periodicEmit(state, sink);
          } else if (newSinceEmit && this.sessions) {
            // Sessions on PERIODIC: the open sessions that got rows since the last tick.
            newSinceEmit = false;
            await this.emitSessions(this.sessions.touched(), sink);
          }
          continue;
        }
        if (timeoutMs !== undefined && now - lastRowsAt >= timeoutMs) {
          // EMIT ... TIMEOUT: no rows for a while; every open window or session is final.
          lastRowsAt = Number.POSITIVE_INFINITY;
          if (this.sessions) await this.emitSessions(this.sessions.closeAll(), sink);
          else if (state && this.watermark?.timeout()) {
            await this.emit(state, sink, '1');
            state.delete('1');
          }
          continue;
        }
        const waitUntil = Math.min(
          nextPeriodic,
          timeoutMs !== undefined && Number.isFinite(lastRowsAt)
            ? lastRowsAt + timeoutMs
            : Number.POSITIVE_INFINITY,
        );
        await this.sleep(waitUntil - now);
      }
      this.status = signal.aborted ? 'canceled' : 'finished';
    } catch (e) {
      this.status = 'failed';
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
      childAbort.abort();
      await Promise.allSettled(children);
      for (const c of cursors) c.close();
      await state?.drop().catch(() => undefined);
      await this.dispose();
    }
  }

  /** Drop the derived tables of nested queries (also for a plan that never ran). */
  async dispose(): Promise<void> {
    await dropQueryTables(this.engine, this.program);
  }

  /** Where a nested query's rows go: its derived table, each row with the next sequence number. */
  private derivedSink(
    table: string,
    key: string,
    header: readonly ResultColumn[],
    ranges: DerivedRanges,
  ): ResultSink {
    let next = 0;
    const columns = [...header.map((h) => h.name), '_tp_sn'];
    return {
      rows: async (rows) => {
        const first = next;
        const payload = rows
          .map((r, i) => `${r.slice(0, -1)}${r.length > 2 ? ',' : ''}${first + i}]`)
          .join('\n');
        // An SQL INSERT, not a raw insert: result column names need not be plain identifiers.
        await this.engine.query(
          `INSERT INTO ${table} (${columns.map(quoteIdent).join(', ')}) FORMAT JSONCompactEachRow\n${payload}`,
        );
        next += rows.length;
        ranges.publish(key, next - 1);
      },
    };
  }

  progress(): ExecutionProgress {
    return { ...this.progressStats };
  }

  pipeline(): PipelineStep[] {
    const steps = [...this.steps.values()];
    return steps.map((s, i) => ({
      id: i,
      name: s.name,
      status: this.status,
      processedBytes: s.bytes,
      processingTimeNs: s.ns,
      inputs: i === 0 ? [] : [i - 1],
    }));
  }

  // --- steps ---

  /** Process the next range of every source with new rows; answers whether any rows were read. */
  private async step(
    cursors: SourceCursor[],
    state: StateTable | undefined,
    sink: ResultSink,
    backfill: boolean,
  ): Promise<boolean> {
    const values: Record<string, number> = {};
    let rows = 0;
    for (const c of cursors) {
      const r = c.pending > 0 ? c.nextRange(MAX_STEP_ROWS) : { lo: c.after, hi: c.after };
      values[P.lo(c.source.index)] = r.lo;
      values[P.hi(c.source.index)] = r.hi;
      rows += r.hi - r.lo;
    }
    this.progressStats.scannedRows += rows;
    const p = this.program;
    await this.admitDedupKeys(values);
    const parts = await this.inputs.parts(values);
    if (p.tail) {
      const carries = p.lags ? this.carryValues(p.lags.depths) : {};
      const sql = unionOf(
        parts.map((part) =>
          ((part.variant && p.tailVariants?.[part.variant]) || p.tail!).fill({
            ...part.values,
            ...carries,
            [P.emitVersion]: this.emitVersion,
          }),
        ),
        true,
      );
      if (sql !== undefined) {
        const text = await this.timed('Tail', () => this.engine.query(sql, { settings: { max_threads: 1 } }));
        await this.output(rowsFromLines(text, this.wide), sink, p.changelog ? 'tail' : undefined);
      }
      if (p.lags) await this.carryForward(p.lags.carry.fill(values), p.lags.depths.length);
    } else if (state && p.aggregation) {
      this.joinFoldedRows = true;
      await this.fold(values, parts, state, sink, backfill);
    } else if (p.session && this.sessions) {
      await this.sessionStep(values, sink);
    }
    for (const c of cursors) c.after = values[P.hi(c.source.index)] ?? c.after;
    // A join whose new rows met nothing gave the aggregation no rows: no periodic emit for it.
    return rows > 0 && this.joinFoldedRows;
  }

  /** The last step's join output gave its aggregation rows (always true without a join). */
  private joinFoldedRows = true;

  private dedupSteps = 0;

  /** dedup(): record the range's new keys before the step reads it; prune the kept keys now and then. */
  private async admitDedupKeys(values: Record<string, number>): Promise<void> {
    const dedups = this.program.dedups ?? [];
    if (dedups.length === 0) return;
    const prune = ++this.dedupSteps % COMPACT_EVERY === 0;
    for (const d of dedups) {
      if (prune) await this.timed('DedupPrune', () => this.engine.query(d.prune));
      await this.timed('Dedup', () => this.engine.query(d.admit.fill(values)));
    }
  }

  /** Next emit version per substream (emit_version() of windows and substreams). */
  private readonly versionBases = new Map<string, number>();

  private versionArrays(): Record<string, string> {
    if (this.versionBases.size === 0) return { [P.versionKeys]: "['']", [P.versionBases]: '[toUInt64(0)]' };
    const entries = [...this.versionBases];
    return {
      [P.versionKeys]: `[${entries.map(([k]) => quoteString(k)).join(', ')}]`,
      [P.versionBases]: `[${entries.map(([, v]) => `toUInt64(${v})`).join(', ')}]`,
    };
  }

  /** Strip the trailing `[substream key, version]` of emitted rows, advancing each substream's version. */
  private takeVersions(rows: string[]): string[] {
    return rows.map((line) => {
      const row = parse(line) as unknown[];
      const version = Number(String(row.pop()));
      const key = String(row.pop());
      this.versionBases.set(key, Math.max(this.versionBases.get(key) ?? 0, version + 1));
      return stringify(row) ?? line;
    });
  }

  /** lag(): the last values of each lagged expression, newest first, carried from batch to batch. */
  private readonly carried: unknown[][] = [];
  /** The same per substream key, for lag() with PARTITION BY. */
  private readonly carriedByKey: Map<string, unknown[]>[] = [];

  private carryValues(depths: readonly number[]): Record<string, string> {
    const keyed = this.program.lags?.keyed ?? false;
    return Object.fromEntries(
      depths.map((d, i) => [
        carryMarker(i),
        keyed
          ? keyedCarryLiteral(this.carriedByKey[i] ?? new Map(), d)
          : carryLiteral(this.carried[i] ?? [], d),
      ]),
    );
  }

  private async carryForward(sql: string, count: number): Promise<void> {
    const text = await this.timed('LagCarry', () => this.engine.query(sql));
    const rows = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown[]);
    if (rows.length === 0) return;
    const depths = this.program.lags?.depths ?? [];
    if (this.program.lags?.keyed) {
      // Rows are newest first, at most `depth` per key; the key is the first column.
      for (let i = 0; i < count; i++) {
        const byKey = this.carriedByKey[i] ?? new Map<string, unknown[]>();
        this.carriedByKey[i] = byKey;
        const fresh = new Map<string, unknown[]>();
        for (const r of rows) {
          const key = String(r[0]);
          const list = fresh.get(key) ?? [];
          list.push(r[i + 1]);
          fresh.set(key, list);
        }
        for (const [key, newest] of fresh)
          byKey.set(key, [...newest, ...(byKey.get(key) ?? [])].slice(0, depths[i] ?? 1));
      }
      return;
    }
    for (let i = 0; i < count; i++) {
      const newest = rows.map((r) => r[i]);
      this.carried[i] = [...newest, ...(this.carried[i] ?? [])].slice(0, depths[i] ?? 1);
    }
  }

  /** Session windows: assign the range's rows to sessions and emit the sessions that closed. */
  private async sessionStep(values: Record<string, number>, sink: ResultSink): Promise<void> {
    const session = this.program.session!;
    const text = await this.timed('SessionAssign', () => this.engine.query(session.assign.fill(values)));
    const rows: SessionRow[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      const [sn, ts, key, start, end] = JSON.parse(line) as [number, number | string, string, number, number];
      rows.push({ sn, ts: Number(ts), key, start: start === 1, end: end === 1 });
    }
    const closed = this.sessions!.process(rows);
    if (rows.length) {
      const last = Math.max(...rows.map((r) => r.ts));
      this.progressStats.lastEventTime = Math.max(this.progressStats.lastEventTime, last);
    }
    const policy = this.program.policy;
    const open = policy.shape === 'window' && policy.onUpdate ? this.sessions!.touched() : [];
    await this.emitSessions([...closed, ...open], sink);
  }

  private async emitSessions(sessions: readonly Session[], sink: ResultSink): Promise<void> {
    const withRows = sessions.filter((s) => s.sns.length > 0);
    if (withRows.length === 0) return;
    const session = this.program.session!;
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const s of withRows)
      for (const sn of s.sns) {
        if (sn < lo) lo = sn;
        if (sn > hi) hi = sn;
      }
    const ranges: Record<string, number> = {};
    for (const src of this.program.sources) {
      ranges[P.lo(src.index)] = lo - 1;
      ranges[P.hi(src.index)] = hi;
    }
    for (const s of withRows) {
      s.version = this.substreamVersions.get(s.key) ?? 0;
      this.substreamVersions.set(s.key, s.version + 1);
    }
    const rowsSql = sessionRowsSql(session, session.sourceRows.fill(ranges), withRows);
    let sql = session.emit.fill({ ...ranges, [SESSION_ROWS]: rowsSql, [P.emitVersion]: this.emitVersion });
    if (this.program.limit !== undefined) sql += `\nLIMIT ${Math.max(this.program.limit - this.emitted, 0)}`;
    const text = await this.timed('Emit', () =>
      this.engine.query(sql, { settings: { max_query_size: 268435456 } }),
    );
    const out = rowsFromLines(text, this.wide);
    if (out.length === 0) return;
    this.emitVersion++;
    await this.output(out, sink, undefined);
  }

  private async fold(
    values: Record<string, number>,
    parts: readonly StepPart[],
    state: StateTable,
    sink: ResultSink,
    backfill: boolean,
  ) {
    const agg = this.program.aggregation!;
    // A join step with nothing to fold (e.g. only versioned_kv updates) changes no group.
    const joined = this.program.join !== undefined;
    // A retracting aggregation whose rows were all filtered out changed nothing: no emit for it.
    const counted = joined || agg.split.argumentColumns !== undefined;
    if (parts.length === 0) {
      this.joinFoldedRows = false;
      return;
    }
    const foldSql = (fills: Record<string, string | number>) => {
      const sql = unionOf(parts.map((part) => agg.fold.fill({ ...part.values, ...fills }))) as string;
      // An empty join output folds nothing, not a keyless aggregate's row of zeros.
      return counted ? `SELECT * FROM (${sql}) SETTINGS empty_result_for_aggregation_by_empty_set = 1` : sql;
    };
    const policy = this.program.policy;
    const batch = ++this.batch;
    let advanced = false;
    if (agg.window && this.watermark) {
      const window = agg.window;
      // Rows older than their substream's watermark in force before this batch are late (dropped);
      // during a backfill the watermark is muted (Proton's processWithMutedWatermark). The same
      // engine call folds the batch and reads its largest event time per substream.
      const wm = backfill ? `toInt64(${-(2n ** 63n) + 1n})` : this.watermark.lookupSql(window.sourceKeySql);
      const fold = foldSql({ [P.watermark]: wm, [P.batch]: batch });
      const maxText = await this.timed('Aggregate', () => state.append(fold, window.maxTime.fill(values)));
      const maxima = new Map<string, bigint>();
      for (const line of maxText.split('\n')) {
        if (!line) continue;
        const [key, max] = JSON.parse(line) as [string, string];
        maxima.set(key, BigInt(max));
      }
      advanced = this.watermark.observe(maxima);
      const maxNs = this.watermark.maxEventTime();
      if (maxNs !== undefined) this.progressStats.lastEventTime = millisFromNanos(maxNs);
    } else {
      const folded = await this.timed('Aggregate', () =>
        state.append(
          foldSql({ [P.watermark]: 0, [P.batch]: batch }),
          counted ? `SELECT count() FROM ${state.name} WHERE __batch = ${batch}` : undefined,
        ),
      );
      if (counted && !/[1-9]/.test(folded)) this.joinFoldedRows = false;
    }
    if (state.appendsSinceCompact >= COMPACT_EVERY)
      await this.timed('Compact', () => state.compact(agg.compact));
    if (backfill) return;

    if (policy.shape === 'global' && policy.onUpdate && !policy.periodicMs) {
      await this.emit(state, sink, this.changedGroups(state, batch));
    } else if (policy.shape === 'window') {
      if (policy.onUpdate && !policy.periodicMs) {
        const open = `NOT (${this.closedWindows()})`;
        await this.emit(state, sink, `${this.changedGroups(state, batch)} AND ${open}`);
      }
      if (advanced && !policy.periodicMs) {
        // ON UPDATE sent each window's changes already; a closing window is not sent again.
        if (policy.onUpdate) await this.deleteClosedWindows(state);
        else await this.emitClosedWindows(state, sink);
      }
    }
  }

  private async afterBackfill(state: StateTable, sink: ResultSink): Promise<void> {
    const policy = this.program.policy;
    if (policy.shape === 'window' && !policy.periodicMs) {
      if (this.watermark?.any) await this.emitClosedWindows(state, sink);
    } else if (policy.shape === 'global' && policy.onUpdate && !policy.periodicMs) {
      await this.emit(state, sink, '1');
    }
  }

  /** PERIODIC tick with new data: the current result (global), or open windows' intermediate results and closed windows. */
  private async periodicEmit(state: StateTable, sink: ResultSink): Promise<void> {
    const policy = this.program.policy;
    // ON UPDATE and CHANGELOG send only the groups changed since the last emit.
    const changedOnly = policy.shape !== 'tail' && (policy.onUpdate || policy.changelog);
    let filter = changedOnly ? this.changedGroups(state, this.batch, true) : '1';
    if (policy.shape === 'global') {
      // Substreams (PARTITION BY) are finalized one by one, each only when it got rows since the
      // last emit (Proton's GlobalAggregatingTransformWithSubstream::finalize).
      if (!changedOnly) filter = this.changedSubstreams(state) ?? filter;
      await this.emit(state, sink, filter);
      return;
    }
    if (policy.shape === 'window') {
      await this.emit(state, sink, filter);
      await this.deleteClosedWindows(state);
    }
  }

  private async emitClosedWindows(state: StateTable, sink: ResultSink): Promise<void> {
    await this.emit(state, sink, this.closedWindows());
    await this.deleteClosedWindows(state);
  }

  private async deleteClosedWindows(state: StateTable): Promise<void> {
    if (!this.watermark?.any) return;
    const closed = this.closedWindows();
    state.delete(closed);
  }

  /** State rows of windows that ended at or before their substream's watermark. */
  private closedWindows(): string {
    const window = this.program.aggregation!.window!;
    const end = this.program.aggregation!.split.windowEnd;
    return `${end} <= fromUnixTimestamp64Nano(${this.watermark!.lookupSql(window.stateKeySql)})`;
  }

  /** Groups with rows folded in batch `batch` (or since the last emit). */
  private changedGroups(state: StateTable, batch: number, sinceLastEmit = false): string {
    const cond = sinceLastEmit ? `__batch > ${this.lastEmittedBatch}` : `__batch = ${batch}`;
    return changedRows(state, this.program.aggregation!.split.keyColumns, cond);
  }

  /** State rows of the substreams (PARTITION BY keys) with rows since the last emit; undefined without substreams. */
  private changedSubstreams(state: StateTable): string | undefined {
    const keys = this.program.aggregation!.split.partitionColumns;
    if (keys.length === 0) return undefined;
    return changedRows(state, keys, `__batch > ${this.lastEmittedBatch}`);
  }

  private lastEmittedBatch = 0;

  private async emit(state: StateTable, sink: ResultSink, filter: string): Promise<void> {
    const agg = this.program.aggregation!;
    let sql = agg.emit.fill({
      __TRB_STATE__: state.name,
      [P.emitFilter]: filter,
      [P.emitVersion]: this.emitVersion,
      ...this.versionArrays(),
    });
    if (this.program.limit !== undefined) sql += `\nLIMIT ${Math.max(this.program.limit - this.emitted, 0)}`;
    const text = await this.timed('Emit', () => state.select(sql));
    this.lastEmittedBatch = this.batch;
    let rows = rowsFromLines(text, this.wide);
    // EMIT CHANGELOG of a retracting aggregation: groups left with no rows retract their last row.
    const gone = agg.goneGroups
      ? (
          await this.timed('Emit', () =>
            state.select(agg.goneGroups!.fill({ __TRB_STATE__: state.name, [P.emitFilter]: filter })),
          )
        )
          .split('\n')
          .filter(Boolean)
          .map((line) => String((JSON.parse(line) as unknown[])[0]))
      : [];
    if (rows.length === 0 && !gone.some((key) => this.lastEmitted.has(key))) return;
    if (agg.versioned) rows = this.takeVersions(rows);
    this.emitVersion++;
    await this.output(rows, sink, this.program.changelog ? 'aggregate' : undefined, gone);
  }

  /** Hand rows to the sink, adding `_tp_delta` for EMIT CHANGELOG and honouring LIMIT. */
  private async output(
    rows: string[],
    sink: ResultSink,
    changelog: 'tail' | 'aggregate' | undefined,
    gone: readonly string[] = [],
  ) {
    let out = rows;
    const at = this.program.changelog?.deltaIndex;
    if (changelog === 'tail' && at !== undefined) {
      out = rows.map((r) => {
        const row = parse(r) as unknown[];
        row.splice(at, 0, 1);
        return stringify(row) ?? r;
      });
    } else if (changelog === 'aggregate' && at !== undefined) {
      out = [];
      for (const key of gone) {
        const previous = this.lastEmitted.get(key);
        if (!previous) continue;
        const retract = [...previous];
        retract.splice(at, 0, -1);
        out.push(stringify(retract) ?? '');
        this.lastEmitted.delete(key);
      }
      for (const r of rows) {
        const row = parse(r) as unknown[];
        const gk = row.pop();
        const key = isLosslessNumber(gk) ? gk.toString() : String(gk);
        const previous = this.lastEmitted.get(key);
        if (previous) {
          const retract = [...previous];
          retract.splice(at, 0, -1);
          out.push(stringify(retract) ?? '');
        }
        this.lastEmitted.set(key, row);
        const add = [...row];
        add.splice(at, 0, 1);
        out.push(stringify(add) ?? '');
      }
    }
    if (this.program.limit !== undefined) out = out.slice(0, Math.max(this.program.limit - this.emitted, 0));
    if (out.length === 0) return;
    this.emitted += out.length;
    await sink.rows(out);
  }

  private limitReached(): boolean {
    return this.program.limit !== undefined && this.emitted >= this.program.limit;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Number.isFinite(ms) ? Math.max(ms, 0) : 2 ** 31 - 1);
      this.wake = done;
    });
  }

  /** Run one engine call of a step, counting its time and output for the query pipeline. */
  private async timed(name: string, fn: () => Promise<unknown>): Promise<string> {
    const started = process.hrtime.bigint();
    const r = (await fn()) as { text?: () => string } | undefined;
    const text = typeof r?.text === 'function' ? r.text() : '';
    const s = this.steps.get(name) ?? { name, calls: 0, ns: 0, bytes: 0 };
    s.calls++;
    s.ns += Number(process.hrtime.bigint() - started);
    s.bytes += text.length;
    this.steps.set(name, s);
    this.progressStats.scannedBytes += text.length;
    return text;
  }
}

async function dropQueryTables(engine: Engine, program: StreamingProgram): Promise<void> {
  for (const t of program.snapshots ?? []) {
    await engine.query(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
  }
  for (const d of program.dedups ?? []) {
    await engine.query(`DROP TABLE IF EXISTS ${d.table}`).catch(() => undefined);
  }
  for (const child of program.children) {
    await engine.query(`DROP TABLE IF EXISTS ${child.source.table}`).catch(() => undefined);
    await dropQueryTables(engine, child.program);
  }
}

/** State rows whose `keys` have a row matching `cond` (any row at all when there are no keys). */
function changedRows(state: StateTable, keys: readonly string[], cond: string): string {
  if (keys.length === 0) return `(SELECT count() FROM ${state.name} WHERE ${cond}) > 0`;
  return `(${keys.join(', ')}) IN (SELECT ${keys.join(', ')} FROM ${state.name} WHERE ${cond})`;
}
