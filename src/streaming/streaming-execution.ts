import { isLosslessNumber, parse, stringify } from 'lossless-json';
import type { Engine } from '../engine/engine.ts';
import { guardedEngine } from '../engine/guarded-engine.ts';
import { laneEngine } from '../engine/lane-engine.ts';
import { quoteIdent, quoteString } from '../engine/settings-clause.ts';
import { userSqlEngine } from '../engine/user-sql-engine.ts';
import { err } from '../errors/tributary-error.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { QueryAnalysis, ResultColumn } from '../queries/query-types.ts';
import { floatColumns, rowsFromLines, wideIntegerColumns } from '../queries/row-codec.ts';
import { DerivedRanges } from './derived-ranges.ts';
import type { Durability } from './durability.ts';
import { durabilityRefusal } from './durability-refusal.ts';
import { type EventBody, EventLog } from './event-log.ts';
import { QUIESCE, type StepInputs, type StepPart, stepInputs, unionOf } from './join-inputs.ts';
import { carryLiteral, carryMarker, keyedCarryLiteral } from './lag-rewrite.ts';
import type { ExecutionProgress, PipelineStep, ResultSink, SourceLag } from './result-sink.ts';
import { SESSION_ROWS, sessionRowsSql } from './session-planner.ts';
import { type SavedSessions, type Session, type SessionRow, SessionTracker } from './session-tracker.ts';
import { identicalRunKey } from './shared-runs.ts';
import { sharedGroupKey } from './shared-step-reads.ts';
import { type CommittedRanges, SourceCursor } from './source-cursor.ts';
import { P, type SqlTemplate } from './sql-template.ts';
import { StateTable } from './state-table.ts';
import { pacedTail, TailPacer } from './step-pacing.ts';
import type { StreamingProgram } from './streaming-program.ts';
import { SubstreamWatermarks } from './substream-watermarks.ts';
import { intervalMillis } from './window-interval.ts';
import { millisFromNanos } from './window-time.ts';

/** Rows a single step reads at most (a long backfill runs as several steps). */
const MAX_STEP_ROWS = 1_000_000;
/** An aggregation folding on its period's ticks folds earlier once a source has this many rows pending. */
const DEFERRED_STEP_ROWS = 100_000;
/** ... and at the latest this long after its last step, so that its lag and checkpoints stay recent. */
const DEFERRED_STEP_MS = 1000;
/** Compact the state table after this many folds. */
const COMPACT_EVERY = 64;

/** The in-memory state of an execution as a checkpoint keeps it (JSON). */
interface SavedState {
  version: 1;
  /** Per source (cursor order): the last `_tp_sn` processed. */
  after: number[];
  emitted: number;
  emitVersion: number;
  batch: number;
  lastEmittedBatch: number;
  dedupSteps: number;
  newSinceEmit: boolean;
  backfill: boolean;
  timedOut: boolean;
  /** When the next periodic emit was due (epoch ms; null without PERIODIC). */
  nextPeriodic: number | null;
  lastEventTime: number;
  watermarks: Array<[string, string | null, string | null]>;
  versionBases: Array<[string, number]>;
  substreamVersions: Array<[string, number]>;
  /** CHANGELOG: per group key, the last row emitted (lossless JSON text). */
  lastEmitted: Array<[string, string]>;
  carried: unknown[][];
  carriedByKey: Array<Array<[string, unknown[]]>>;
  sessions?: SavedSessions;
  /** The program's start positions when the run began (joins read the other sides from them). */
  startAfter: number[];
  /** What the step inputs keep (join watermarks, ...). */
  inputs?: unknown;
  /** A nested execution: the sequence number its next derived row gets. */
  derivedNext?: number;
}

/** Where a nested execution writes (its parent's derived table) and what its checkpoints keep of it. */
interface DerivedOutput {
  readonly table: string;
  /** Rows with `_tp_sn` at or below this are in the parent's checkpoint already (-1: none). */
  keepAfter: number;
  next(): number;
  resumeAt(next: number): void;
}

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
  /** Float columns, whose `-nan` prints as `nan` (as Proton prints it). */
  private readonly floats: number[];
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
  /** Per source: where the first run of this execution started (a restore takes it back). */
  private startAfter: number[];
  /** What each step reads: the sources' new ranges, or a join's parts (rebuilt by a restore). */
  private inputs: StepInputs;
  /**
   * A nested execution's derived table (its parent reads it), saved with its checkpoints; a
   * restore fills it back and tells the parent's sink where its sequence numbers go on.
   */
  private derivedOutput: DerivedOutput | undefined;
  /** Durable runs: the derived outputs of the nested executions, by their source key. */
  private readonly childOutputs = new Map<string, DerivedOutput>();
  /** The `keepAfter` of the derived output as of the last checkpoint (what its copy holds). */
  private savedKeepAfter: number | undefined;
  private markResumed: () => void = () => undefined;
  /** Resolves once a durable run has restored its checkpoint and replayed its journal (or ended). */
  readonly resumed = new Promise<void>((resolve) => {
    this.markResumed = resolve;
  });

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
    // Every step runs on the engine's `stream` sessions, so commits never queue behind steps.
    const engine = userSqlEngine(laneEngine(rawEngine, 'stream'));
    this.engine = keys.length > 0 ? guardedEngine(engine, (work) => ranges.read(keys, work)) : engine;
    this.startAfter = [...program.startAfter];
    this.inputs = stepInputs(
      program.join,
      this.startAfter,
      this.engine,
      program.tailVariants?.initial !== undefined,
    );
    this.header = program.header;
    this.wide = wideIntegerColumns(program.header);
    this.floats = floatColumns(program.header);
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

  /**
   * Run until canceled or the LIMIT is reached. With `durability` the run is durable
   * (durability.ts): it resumes from the store's checkpoint and journal, journals each event,
   * tags its hand-overs and saves checkpoints; without, nothing of that costs anything.
   */
  async run(sink: ResultSink, signal: AbortSignal, durability?: Durability): Promise<void> {
    // Identical queries starting where a running one stands run once (shared-runs.ts).
    const runs = durability ? undefined : this.ranges.shared?.runs;
    const key = runs ? identicalRunKey(this.program, this.alsoReads) : undefined;
    if (!runs || key === undefined) return this.execute(sink, signal, durability);
    return runs.run<StreamingExecution>(
      key,
      this.program.startAfter,
      this,
      sink,
      signal,
      (all, stop) => this.execute(all, stop),
      (run) => {
        this.servedBy = run === this ? undefined : run;
      },
    );
  }

  /** The run serving this query when it joined an identical one (its progress is that run's). */
  private servedBy: StreamingExecution | undefined;
  /** When the last step ran (epoch ms; deferred folds wait at most `DEFERRED_STEP_MS` after it). */
  private lastStepAt = 0;
  /** A step ran since the periodic emit became due (the emit goes next). */
  private steppedForTick = false;
  /** Events applied so far, and whether one is in flight (`joinableAt`). */
  private eventsApplied = 0;
  private inEvent = false;

  joinableAt(startAfter: readonly number[]): boolean {
    if (this.inEvent || (this.status !== 'pending' && this.status !== 'running')) return false;
    const at = this.cursorsNow.length > 0 ? this.cursorsNow.map((c) => c.after) : this.startAfter;
    if (at.length !== startAfter.length || at.some((a, i) => a !== startAfter[i])) return false;
    if (this.eventsApplied === 0) return true;
    // A tail's next rows depend on nothing but the range (no count of what it emitted before).
    const p = this.program;
    return (
      p.tail !== undefined && p.limit === undefined && !p.tail.has(P.emitVersion) && !p.tail.has(P.emitted)
    );
  }

  private async execute(sink: ResultSink, signal: AbortSignal, durability?: Durability): Promise<void> {
    const p = this.program;
    const ranges = new DerivedRanges(this.ranges);
    const childAbort = new AbortController();
    const children: Promise<void>[] = [];
    let cursors: SourceCursor[] = [];
    const state = p.aggregation ? new StateTable(this.engine, 'q') : undefined;
    // Nested queries stop after this one's last checkpoint (the finally below): what they hold
    // for it is then saved after what it has processed.
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort);
    this.status = 'running';
    // Executions running the same tail over the same stream share each range's read.
    const group = this.ranges.shared ? sharedGroupKey(p) : undefined;
    const leaveGroup = group ? this.ranges.shared?.join(group) : undefined;
    this.sharedGroup = leaveGroup ? group : undefined;
    let childFailure: unknown;
    try {
      if (durability) {
        const refusal = durabilityRefusal(p, durability.store.nested !== undefined);
        if (refusal) throw err('NOT_IMPLEMENTED', { detail: refusal });
      }
      // Nested queries run alongside, each writing into its derived table; durably, each with
      // its own store nested in this one's (its derived table saved with its checkpoints).
      const childrenResumed: Promise<void>[] = [];
      for (const [i, child] of p.children.entries()) {
        await this.engine.query(child.createTable);
        const execution = new StreamingExecution(
          this.rawEngine,
          this.ranges,
          child.program,
          this.analysis,
          this.alsoReads,
        );
        execution.timerOrigin = this.timerOrigin;
        const into = this.derivedSink(child.source.table, child.source.key, child.program.header, ranges);
        const nested = durability?.store.nested
          ? { store: durability.store.nested(i), checkpointIntervalMs: durability.checkpointIntervalMs }
          : undefined;
        if (nested) {
          const output: DerivedOutput = {
            table: child.source.table,
            keepAfter: -1,
            next: into.next,
            resumeAt: into.resumeAt,
          };
          execution.derivedOutput = output;
          this.childOutputs.set(child.source.key, output);
        }
        childrenResumed.push(execution.resumed);
        children.push(
          execution.run(into, childAbort.signal, nested).catch((e: unknown) => {
            childFailure = e;
            this.wake?.();
          }),
        );
      }
      // A live tail coalesces commits that arrive while it is busy (step-pacing.ts).
      const pacing = this.ranges.shared?.pacing;
      const pacer = pacing && pacedTail(p) ? new TailPacer(pacing) : undefined;
      cursors = p.sources.map(
        (s, i) =>
          new SourceCursor(s, p.startAfter[i] ?? -1, ranges, () => {
            pacer?.committed(Date.now());
            this.wake?.();
          }),
      );
      this.cursorsNow = cursors;
      if (state && p.aggregation) await state.create(p.aggregation.emptyFold);
      const policy = p.policy;
      const periodicMs = policy.shape !== 'tail' ? policy.periodicMs : undefined;
      const timeoutMs = policy.shape === 'window' ? policy.timeoutMs : undefined;
      const foldsOnTick =
        state !== undefined && periodicMs !== undefined && timeoutMs === undefined && !p.session && !p.join;
      this.nextPeriodic = periodicMs ? this.timerOrigin + periodicMs : Number.POSITIVE_INFINITY;
      // A global aggregation over nested periodic aggregations only, with a period no longer than
      // theirs: each of their emits is followed by its own, as Proton's timers in one pipeline
      // are (rather than up to a period later).
      const pacedByChildren =
        policy.shape === 'global' &&
        periodicMs !== undefined &&
        p.sources.length > 0 &&
        p.sources.every((s) => DerivedRanges.isDerivedKey(s.key)) &&
        p.children.every((c) => {
          const cp = c.program.policy;
          return cp.shape === 'global' && cp.periodicMs !== undefined && periodicMs <= cp.periodicMs;
        });
      this.lastRowsAt = Date.now();
      // Only a query told to start in the past backfills; rows committed while it was being
      // planned are live rows.
      this.backfill = p.backfill && cursors.some((c) => c.pending > 0);
      let out = sink;
      let log: EventLog | undefined;
      if (durability) {
        log = new EventLog(durability);
        out = log.tagging(sink);
        // The journal's steps over derived tables read rows the nested queries make again first.
        await Promise.all(childrenResumed);
        if (childFailure) throw childFailure;
        await this.resume(log, cursors, state, out);
      }
      this.markResumed();
      /** Run one event: journaled first when durable; a checkpoint after it when one is due. */
      const event = async (body: EventBody) => {
        if (log) await log.begin(body);
        this.inEvent = true;
        try {
          await this.apply(body, cursors, state, out);
        } finally {
          this.inEvent = false;
          this.eventsApplied++;
        }
        if (!log) return;
        log.end();
        if (log.due) await this.checkpoint(log, cursors, state);
      };

      while (!signal.aborted && !this.limitReached()) {
        if (childFailure) throw childFailure;
        if (this.backfill && !cursors.some((c) => c.pending > 0)) {
          // The backfill is over: emit what it made final at once (Proton's processAfterUnmuted).
          await event({ kind: 'backfill-end' });
          continue;
        }
        const pending = cursors.filter((c) => c.pending > 0);
        // An aggregation that only emits on its period folds what is pending when the period is
        // due (or once much is pending), not at every commit: one engine call per period instead
        // of one per commit, and the emit still covers every row committed before the tick.
        const tickDue = Date.now() >= this.nextPeriodic;
        const deferred =
          foldsOnTick &&
          !pacedByChildren &&
          !this.backfill &&
          !tickDue &&
          Date.now() < this.lastStepAt + DEFERRED_STEP_MS &&
          pending.every((c) => c.pending < DEFERRED_STEP_ROWS);
        // A due tick gets one step first, then its emit: commits arriving during each step must
        // not keep the periodic emit from ever running.
        const emitFirst = tickDue && this.steppedForTick && !this.backfill;
        const pacedUntil =
          pacer && !this.backfill && pending.length > 0
            ? pacer.dueAt(pending[0]?.pending ?? 0, pending[0]?.pendingCommits ?? 0)
            : 0;
        if (pending.length > 0 && !deferred && !emitFirst && Date.now() >= pacedUntil) {
          // A window aggregation's watermark moves insert by insert (rows late against an earlier
          // insert of the same range are dropped). Over one stream its live steps cover several
          // inserts and judge each against the watermark the inserts before it left (`cuts`); with
          // ON UPDATE (an emit per insert) or several sources, a live step takes one insert.
          const windowed = this.watermark !== undefined && !this.backfill;
          const cutting =
            windowed &&
            cursors.length === 1 &&
            this.program.aggregation?.window?.insertLate !== undefined &&
            !(this.program.policy.shape === 'window' && this.program.policy.onUpdate);
          const stepRanges = cursors.map((c): [number, number] => {
            const oneCommit = windowed && !cutting;
            const r = c.pending > 0 ? c.nextRange(MAX_STEP_ROWS, oneCommit) : { lo: c.after, hi: c.after };
            const hi = this.sharedGroup ? this.ranges.shared!.align(this.sharedGroup, r.lo, r.hi) : r.hi;
            return [r.lo, hi];
          });
          const [lo0, hi0] = stepRanges[0] ?? [0, 0];
          const cuts = cutting ? cursors[0]!.commitEndsWithin(lo0, hi0) : [];
          const startedAt = Date.now();
          const t0 = performance.now();
          await event({
            kind: 'step',
            ranges: stepRanges,
            ...(cuts.length > 0 ? { cuts } : {}),
            ...(this.backfill ? { backfill: true } : {}),
          });
          if (tickDue) this.steppedForTick = true;
          this.lastStepAt = Date.now();
          pacer?.stepped(startedAt, performance.now() - t0);
          if (pacedByChildren) this.nextPeriodic = Math.min(this.nextPeriodic, this.lastStepAt);
          continue;
        }
        const now = Date.now();
        if (now >= this.nextPeriodic) {
          this.steppedForTick = false;
          // At least 1 ms ahead: a period below the clock's grain (`1us`, `1ns`, accepted as in
          // Proton) runs every millisecond instead of re-arming in the past and spinning.
          this.nextPeriodic = now + Math.max(periodicMs ?? 0, 1);
          if (this.newSinceEmit && (state || this.sessions)) await event({ kind: 'periodic' });
          continue;
        }
        // An aligned join's left rows waiting for a quiet right side (join_quiesce_threshold_ms).
        const quiesceAt = this.inputs.quiesceAt?.();
        if (quiesceAt !== undefined && now >= quiesceAt) {
          await event({ kind: 'step', ranges: cursors.map((c) => [c.after, c.after]), quiesce: true });
          continue;
        }
        if (timeoutMs !== undefined && now - this.lastRowsAt >= timeoutMs) {
          await event({ kind: 'timeout' });
          continue;
        }
        if (log?.due) {
          await this.checkpoint(log, cursors, state);
          continue;
        }
        const waitUntil = Math.min(
          this.nextPeriodic,
          timeoutMs !== undefined && Number.isFinite(this.lastRowsAt)
            ? this.lastRowsAt + timeoutMs
            : Number.POSITIVE_INFINITY,
          log?.dueAt ?? Number.POSITIVE_INFINITY,
          this.inputs.quiesceAt?.() ?? Number.POSITIVE_INFINITY,
          // Deferred rows are folded at the latest `DEFERRED_STEP_MS` after the last step.
          pending.length > 0 ? this.lastStepAt + DEFERRED_STEP_MS : Number.POSITIVE_INFINITY,
          pacedUntil > 0 ? pacedUntil : Number.POSITIVE_INFINITY,
        );
        await this.sleep(waitUntil - now);
      }
      // A clean stop keeps everything done so far (a crash keeps the last checkpoint and journal).
      // A nested query saves again when its parent's checkpoint moved past rows its copy holds.
      const stale = this.derivedOutput !== undefined && this.derivedOutput.keepAfter !== this.savedKeepAfter;
      if (log && (log.hasUnsaved || stale)) await this.checkpoint(log, cursors, state, true);
      this.status = signal.aborted ? 'canceled' : 'finished';
    } catch (e) {
      this.status = 'failed';
      throw e;
    } finally {
      this.markResumed();
      signal.removeEventListener('abort', onAbort);
      leaveGroup?.();
      this.sharedGroup = undefined;
      childAbort.abort();
      await Promise.allSettled(children);
      for (const c of cursors) c.close();
      await state?.drop().catch(() => undefined);
      await durability?.store.close?.().catch(() => undefined);
      await this.dispose();
    }
  }

  /** Drop the derived tables of nested queries (also for a plan that never ran). */
  async dispose(): Promise<void> {
    await dropQueryTables(this.engine, this.program);
  }

  /**
   * Where a nested query's rows go: its derived table, each row with the next sequence number.
   * `resumeAt` says the table holds rows up to `next - 1` already (restored from a checkpoint);
   * `next` is the sequence number the next row gets.
   */
  private derivedSink(
    table: string,
    key: string,
    header: readonly ResultColumn[],
    ranges: DerivedRanges,
  ): ResultSink & { resumeAt(next: number): void; next(): number } {
    let next = 0;
    const columns = [...header.map((h) => h.name), '_tp_sn'];
    return {
      next: () => next,
      resumeAt: (at) => {
        next = at;
        if (at > 0) ranges.publish(key, at - 1);
      },
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
    if (this.servedBy) return this.servedBy.progress();
    return { ...this.progressStats, sources: this.sourceLags() };
  }

  /** Per source stream: committed vs processed sequence numbers (a query behind shows its lag). */
  private sourceLags(): SourceLag[] {
    const byKey = new Map<string, SourceLag>();
    for (const c of this.cursorsNow) {
      if (DerivedRanges.isDerivedKey(c.source.key)) continue;
      const prior = byKey.get(c.source.key);
      byKey.set(c.source.key, {
        stream: c.source.key,
        committedSn: Math.max(prior?.committedSn ?? -1, c.committed),
        processedSn: Math.min(prior?.processedSn ?? Number.POSITIVE_INFINITY, c.after),
      });
    }
    return [...byKey.values()];
  }

  private cursorsNow: readonly SourceCursor[] = [];
  /** The shared-read group this execution's tail steps belong to (shared-step-reads.ts). */
  private sharedGroup: string | undefined;

  /** Per source stream key: the last `_tp_sn` processed so far (materialized view stats). */
  processedSn(): Record<string, number> {
    if (this.servedBy) return this.servedBy.processedSn();
    const out: Record<string, number> = {};
    for (const c of this.cursorsNow)
      if (!DerivedRanges.isDerivedKey(c.source.key)) out[c.source.key] = c.after;
    return out;
  }

  /** Engine calls per step name so far (benches, tests). */
  stepCalls(): Record<string, number> {
    if (this.servedBy) return this.servedBy.stepCalls();
    return Object.fromEntries([...this.steps.values()].map((s) => [s.name, s.calls]));
  }

  /** Source nodes (each stream's committed and processed positions), then the steps in order. */
  pipeline(): PipelineStep[] {
    if (this.servedBy) return this.servedBy.pipeline();
    const sources: PipelineStep[] = this.sourceLags().map((lag, i) => ({
      id: i,
      name: `Source ${lag.stream}`,
      status: this.status,
      processedBytes: 0,
      processingTimeNs: 0,
      inputs: [],
      source: lag,
    }));
    const first = sources.length;
    const steps = [...this.steps.values()].map((s, i) => ({
      id: first + i,
      name: s.name,
      status: this.status,
      processedBytes: s.bytes,
      processingTimeNs: s.ns,
      inputs: i === 0 ? sources.map((n) => n.id) : [first + i - 1],
    }));
    return [...sources, ...steps];
  }

  // --- events ---

  /** Rows arrived since the last periodic emit. */
  private newSinceEmit = false;
  /** The query is reading what was committed before it started (watermarks muted). */
  private backfill = false;
  /** When the next periodic emit is due (epoch ms; +Infinity without PERIODIC). */
  private nextPeriodic = Number.POSITIVE_INFINITY;
  /**
   * Where the periodic timer counts from: when the query was planned (this object made), before
   * its engine tables are created and its backfill read, as Proton arms the timer when it builds
   * the pipeline (WatermarkStamper::preProcess) and, after a backfill, emits at once only if a
   * tick fell due meanwhile. A nested query counts from its outer query's origin.
   */
  private timerOrigin = Date.now();
  /** When the last step with rows ran (EMIT ... TIMEOUT); +Infinity once the timeout fired. */
  private lastRowsAt = 0;

  /** Run one event (live or replayed from the journal): a step, a periodic emit, a timeout, the backfill's end. */
  private async apply(
    event: EventBody,
    cursors: SourceCursor[],
    state: StateTable | undefined,
    sink: ResultSink,
  ): Promise<void> {
    switch (event.kind) {
      case 'step': {
        const hadRows = await this.step(
          cursors,
          event.ranges,
          state,
          sink,
          event.backfill ?? false,
          event.cuts,
          event.quiesce ?? false,
        );
        if (hadRows) {
          this.newSinceEmit = true;
          this.lastRowsAt = Date.now();
        }
        return;
      }
      case 'backfill-end':
        this.backfill = false;
        if (state) await this.afterBackfill(state, sink);
        return;
      case 'periodic':
        this.newSinceEmit = false;
        if (state) await this.periodicEmit(state, sink);
        // Sessions on PERIODIC: the open sessions that got rows since the last tick.
        else if (this.sessions) await this.emitSessions(this.sessions.touched(), sink);
        return;
      case 'timeout':
        // EMIT ... TIMEOUT: no rows for a while; every open window or session is final.
        this.lastRowsAt = Number.POSITIVE_INFINITY;
        if (this.sessions) await this.emitSessions(this.sessions.closeAll(), sink);
        else if (state && this.watermark?.timeout()) {
          await this.emit(state, sink, '1');
          state.delete('1');
        }
        return;
    }
  }

  // --- durability ---

  /** Engine tables the execution reads later, by a name stable across runs. */
  private liveTables(state: StateTable | undefined): Record<string, string> {
    const tables: Record<string, string> = {};
    if (state) tables.state = state.name;
    (this.program.dedups ?? []).forEach((d, i) => {
      tables[`dedup${i}`] = d.table;
    });
    // Only the derived rows the parent's checkpoint has not processed yet: it never reads the
    // others again (a checkpoint does not copy all the nested query ever made).
    const out = this.derivedOutput;
    if (out) tables.output = `(SELECT * FROM ${out.table} WHERE _tp_sn > ${out.keepAfter})`;
    // table() snapshots joined in: the recovered query joins with what the first run read, as
    // Proton restores a join's right side from its checkpoint.
    this.tableSnapshots().forEach((t, i) => {
      tables[`snapshot${i}`] = t;
    });
    return tables;
  }

  /**
   * The `table()` snapshots a checkpoint saves: the program's engine tables but a join's kept
   * sides, which a restored run rebuilds from the streams (join-side-state.ts).
   */
  private tableSnapshots(): string[] {
    const join = this.program.join;
    const kept = new Set(
      join?.kind === 'enrich' || join?.kind === 'changelog' ? (join.kept ?? []).map((k) => k.table) : [],
    );
    return (this.program.snapshots ?? []).filter((t) => !kept.has(t));
  }

  /** Start a durable run: restore the checkpoint and replay the journal, or save checkpoint 0. */
  private async resume(
    log: EventLog,
    cursors: SourceCursor[],
    state: StateTable | undefined,
    sink: ResultSink,
  ): Promise<void> {
    const store = log.durability.store;
    const checkpoint = await store.load();
    if (!checkpoint) {
      // The start position is durable before the first event.
      await this.checkpoint(log, cursors, state, true);
      return;
    }
    this.restoreState(checkpoint.state as SavedState, cursors);
    const tables = checkpoint.tables;
    if (state && tables.state) await state.restore(tables.state);
    for (const [i, d] of (this.program.dedups ?? []).entries()) {
      const saved = tables[`dedup${i}`];
      if (saved) await this.rawEngine.query(`INSERT INTO ${d.table} SELECT * FROM ${saved}`);
    }
    for (const [i, t] of this.tableSnapshots().entries()) {
      const saved = tables[`snapshot${i}`];
      if (!saved) continue;
      await this.rawEngine.query(`TRUNCATE TABLE ${t}`);
      await this.rawEngine.query(`INSERT INTO ${t} SELECT * FROM ${saved}`);
    }
    if (this.derivedOutput && tables.output) {
      const table = this.derivedOutput.table;
      await this.rawEngine.query(`INSERT INTO ${table} SELECT * FROM ${tables.output}`);
      this.derivedOutput.resumeAt((checkpoint.state as SavedState).derivedNext ?? 0);
    }

    log.seq = checkpoint.seq;
    for (const entry of await store.journal()) {
      log.replay(entry);
      await this.apply(entry, cursors, state, sink);
      log.end();
    }
  }

  /** Save a checkpoint as of the end of the last event. */
  private async checkpoint(
    log: EventLog,
    cursors: SourceCursor[],
    state: StateTable | undefined,
    force = false,
  ): Promise<void> {
    if (!force && !log.hasUnsaved) return;
    const agg = this.program.aggregation;
    // serialized JavaScript aggregate states: the checkpoint keeps them, not the values since
    if (state && agg?.compactBeforeCheckpoint && state.appendsSinceCompact > 0)
      await state.compact(agg.compact);
    await state?.flushDeletes();
    const processedSn: Record<string, number> = {};
    for (const c of cursors) processedSn[c.source.key] = Math.max(processedSn[c.source.key] ?? -1, c.after);
    const keepAfter = this.derivedOutput?.keepAfter;
    await log.save({
      processedSn,
      processedTime: this.progressStats.lastEventTime,
      state: this.saveState(cursors),
      tables: this.liveTables(state),
    });
    this.savedKeepAfter = keepAfter;
    // Derived rows at or before this checkpoint's positions are not needed by a restore any more,
    // but for a join side kept from them (changelog() of a CTE joined): a restore rebuilds it
    // from all of its rows (join-side-state.ts).
    const join = this.program.join;
    const kept = new Set(join?.kind === 'changelog' ? (join.kept ?? []).map((k) => k.index) : []);
    for (const c of cursors) {
      const out = this.childOutputs.get(c.source.key);
      if (out && !kept.has(c.source.index)) out.keepAfter = Math.max(out.keepAfter, c.after);
    }
  }

  /** The in-memory state a later step depends on, as JSON. */
  private saveState(cursors: readonly SourceCursor[]): SavedState {
    return {
      version: 1,
      after: cursors.map((c) => c.after),
      emitted: this.emitted,
      emitVersion: this.emitVersion,
      batch: this.batch,
      lastEmittedBatch: this.lastEmittedBatch,
      dedupSteps: this.dedupSteps,
      newSinceEmit: this.newSinceEmit,
      backfill: this.backfill,
      timedOut: !Number.isFinite(this.lastRowsAt),
      nextPeriodic: Number.isFinite(this.nextPeriodic) ? this.nextPeriodic : null,
      lastEventTime: this.progressStats.lastEventTime,
      watermarks: this.watermark?.save() ?? [],
      versionBases: [...this.versionBases],
      substreamVersions: [...this.substreamVersions],
      lastEmitted: [...this.lastEmitted].map(([k, row]) => [k, stringify(row) ?? '[]']),
      carried: this.carried,
      carriedByKey: this.carriedByKey.map((m) => [...m]),
      ...(this.sessions ? { sessions: this.sessions.save() } : {}),
      startAfter: [...this.startAfter],
      ...(this.derivedOutput ? { derivedNext: this.derivedOutput.next() } : {}),
      ...(this.inputs.save ? { inputs: this.inputs.save() } : {}),
    };
  }

  private restoreState(saved: SavedState, cursors: readonly SourceCursor[]): void {
    if (saved?.version !== 1 || saved.after.length !== cursors.length)
      throw new Error('the checkpoint does not fit this query (another query or another version)');
    cursors.forEach((c, i) => {
      c.after = saved.after[i] ?? c.after;
    });
    this.emitted = saved.emitted;
    this.emitVersion = saved.emitVersion;
    this.batch = saved.batch;
    this.lastEmittedBatch = saved.lastEmittedBatch;
    this.dedupSteps = saved.dedupSteps;
    this.newSinceEmit = saved.newSinceEmit;
    this.backfill = saved.backfill;
    this.lastRowsAt = saved.timedOut ? Number.POSITIVE_INFINITY : Date.now();
    // Periodic emits keep their cadence across a restart: one overdue fires after the first steps.
    if (saved.nextPeriodic !== null && Number.isFinite(this.nextPeriodic))
      this.nextPeriodic = Math.min(this.nextPeriodic, saved.nextPeriodic);
    this.progressStats.lastEventTime = saved.lastEventTime;
    this.watermark?.restore(saved.watermarks);
    for (const [k, v] of saved.versionBases) this.versionBases.set(k, v);
    for (const [k, v] of saved.substreamVersions) this.substreamVersions.set(k, v);
    for (const [k, row] of saved.lastEmitted) this.lastEmitted.set(k, parse(row) as unknown[]);
    saved.carried.forEach((values, i) => {
      this.carried[i] = values;
    });
    saved.carriedByKey.forEach((entries, i) => {
      this.carriedByKey[i] = new Map(entries);
    });
    if (this.sessions && saved.sessions) this.sessions.restore(saved.sessions);
    // Joins read the other sides from where the first run started, not from this run's start.
    this.startAfter = [...saved.startAfter];
    this.inputs = stepInputs(
      this.program.join,
      this.startAfter,
      this.engine,
      this.program.tailVariants?.initial !== undefined,
    );
    if (saved.inputs !== undefined) this.inputs.restore?.(saved.inputs);
  }

  // --- steps ---

  /** Process the given range `(lo, hi]` of every source; answers whether any rows were read. */
  private async step(
    cursors: SourceCursor[],
    stepRanges: ReadonlyArray<readonly [number, number]>,
    state: StateTable | undefined,
    sink: ResultSink,
    backfill: boolean,
    cuts: readonly number[] = [],
    quiesce = false,
  ): Promise<boolean> {
    const values: Record<string, number> = quiesce ? { [QUIESCE]: 1 } : {};
    let rows = 0;
    cursors.forEach((c, i) => {
      const [lo, hi] = stepRanges[i] ?? [c.after, c.after];
      values[P.lo(c.source.index)] = lo;
      values[P.hi(c.source.index)] = hi;
      values[P.start(c.source.index)] = this.startAfter[i] ?? -1;
      rows += hi - lo;
      values[P.late] = 1;
    });
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
            [P.emitted]: this.emitted,
          }),
        ),
        true,
      );
      if (sql !== undefined) {
        const read = () => this.engine.query(sql, { settings: { max_threads: 1 } });
        const group = this.sharedGroup;
        const shared = this.ranges.shared;
        const text =
          group && shared
            ? await this.timed('Tail', async () => {
                const t = await shared.read(group, sql, async () => (await read()).text());
                return { text: () => t };
              })
            : await this.timed('Tail', read);
        await this.output(
          rowsFromLines(text, this.wide, this.floats),
          sink,
          p.changelog ? 'tail' : undefined,
        );
      }
      if (p.lags) await this.carryForward(p.lags.carry.fill(values), p.lags.depths.length);
    } else if (state && p.aggregation) {
      this.joinFoldedRows = true;
      await this.fold(values, parts, state, sink, backfill, cuts);
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
    for (const [i, src] of this.program.sources.entries()) {
      ranges[P.lo(src.index)] = lo - 1;
      ranges[P.hi(src.index)] = hi;
      ranges[P.start(src.index)] = this.startAfter[i] ?? -1;
    }
    for (const s of withRows) {
      s.version = this.substreamVersions.get(s.key) ?? 0;
      this.substreamVersions.set(s.key, s.version + 1);
    }
    const rowsSql = sessionRowsSql(session.sourceRows.fill(ranges), withRows);
    let sql = session.emit.fill({ ...ranges, [SESSION_ROWS]: rowsSql, [P.emitVersion]: this.emitVersion });
    if (this.program.limit !== undefined) sql += `\nLIMIT ${Math.max(this.program.limit - this.emitted, 0)}`;
    const text = await this.timed('Emit', () =>
      this.engine.query(sql, { settings: { max_query_size: 268435456 } }),
    );
    const out = rowsFromLines(text, this.wide, this.floats);
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
    cuts: readonly number[] = [],
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
      const noFilter = `toInt64(${-(2n ** 63n) + 1n})`;
      const byInsert = !backfill && cuts.length > 0 ? window.insertLate : undefined;
      const wm = backfill || byInsert ? noFilter : this.watermark.lookupSql(window.sourceKeySql);
      const late = byInsert
        ? `${byInsert.timeNsSql} >= ${await this.insertWatermarksSql(byInsert.maxTime, window.sourceKeySql, values, cuts)}`
        : 1;
      const fold = foldSql({ [P.watermark]: wm, [P.late]: late, [P.batch]: batch });
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

  /**
   * The late filter of a step over several inserts of one stream: each row is judged against the
   * watermark the inserts before its own left, as when each insert is its own step (Proton
   * stamps watermarks block by block). One engine call reads each insert's largest event time per
   * substream; the watermarks in force before each insert are then computed here.
   */
  private async insertWatermarksSql(
    insertMaxTime: SqlTemplate,
    keySql: string,
    values: Record<string, number>,
    cuts: readonly number[],
  ): Promise<string> {
    const insertOf = `multiIf(${cuts.map((end, i) => `_tp_sn <= ${end}, ${i + 1}`).join(', ')}, ${cuts.length + 1})`;
    const text = await this.timed('Aggregate', () =>
      this.engine.query(insertMaxTime.fill({ ...values, [P.commit]: insertOf })),
    );
    const byInsert = new Map<number, Map<string, bigint>>();
    for (const line of text.split('\n')) {
      if (!line) continue;
      const [key, insert, max] = JSON.parse(line) as [string, number | string, string];
      const n = Number(insert);
      const m = byInsert.get(n) ?? new Map<string, bigint>();
      byInsert.set(n, m);
      m.set(key, BigInt(max));
    }
    const progress = this.watermark!.copy();
    const branches: string[] = [];
    cuts.forEach((end, i) => {
      branches.push(`_tp_sn <= ${end}`, progress.lookupSql(keySql));
      const maxima = byInsert.get(i + 1);
      if (maxima) progress.observe(maxima);
    });
    return `multiIf(${branches.join(', ')}, ${progress.lookupSql(keySql)})`;
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
      // the batch being emitted (JavaScript aggregates with their own emit process its values)
      [P.batch]: this.batch,
      [P.emitVersion]: this.emitVersion,
      ...this.versionArrays(),
    });
    if (this.program.limit !== undefined) sql += `\nLIMIT ${Math.max(this.program.limit - this.emitted, 0)}`;
    const text = await this.timed('Emit', () => state.select(sql));
    this.lastEmittedBatch = this.batch;
    let rows = rowsFromLines(text, this.wide, this.floats);
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
