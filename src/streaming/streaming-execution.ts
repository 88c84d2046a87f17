import type { Engine } from '../engine/engine.ts';
import { guardedEngine } from '../engine/guarded-engine.ts';
import { laneEngine } from '../engine/lane-engine.ts';
import { quoteIdent } from '../engine/settings-clause.ts';
import { userSqlEngine } from '../engine/user-sql-engine.ts';
import { err } from '../errors/tributary-error.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { QueryAnalysis, ResultColumn } from '../queries/query-types.ts';
import { DerivedRanges } from './derived-ranges.ts';
import type { Durability } from './durability.ts';
import { durabilityRefusal } from './durability-refusal.ts';
import { type EventBody, EventLog } from './event-log.ts';
import { QUIESCE, type StepInputs, stepInputs } from './join-inputs.ts';
import { AggregationOperator } from './operators/aggregation-operator.ts';
import { ExecutionOutput } from './operators/execution-output.ts';
import type { SavedState } from './operators/saved-state.ts';
import { SessionOperator } from './operators/session-operator.ts';
import type { StepOperator } from './operators/step-operator.ts';
import { TailOperator } from './operators/tail-operator.ts';
import type { ExecutionProgress, PipelineStep, ResultSink, SourceLag } from './result-sink.ts';
import { identicalRunKey } from './shared-runs.ts';
import { sharedGroupKey } from './shared-step-reads.ts';
import { type CommittedRanges, SourceCursor } from './source-cursor.ts';
import { P } from './sql-template.ts';
import { pacedTail, TailPacer } from './step-pacing.ts';
import type { StreamingProgram } from './streaming-program.ts';

/** Rows a single step reads at most (a long backfill runs as several steps). */
const MAX_STEP_ROWS = 1_000_000;
/** An aggregation folding on its period's ticks folds earlier once a source has this many rows pending. */
const DEFERRED_STEP_ROWS = 100_000;
/** ... and at the latest this long after its last step, so that its lag and checkpoints stay recent. */
const DEFERRED_STEP_MS = 1000;
/** Prune dedup() keys after this many steps. */
const COMPACT_EVERY = 64;

/** Where a nested execution writes (its parent's derived table) and what its checkpoints keep of it. */
interface DerivedOutput {
  readonly table: string;
  /** Rows with `_tp_sn` at or below this are in the parent's checkpoint already (-1: none). */
  keepAfter: number;
  next(): number;
  resumeAt(next: number): void;
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
  private wake: (() => void) | undefined;
  private status = 'pending';
  /** What the operators share: the engine, emitted rows, emit versions, step timings. */
  private readonly out: ExecutionOutput;
  /** The query's shape: a tail, an aggregation or a session window (operators/). */
  private readonly operator: StepOperator;

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
    this.engine =
      keys.length > 0
        ? guardedEngine(
            engine,
            (work) => ranges.read(keys, work),
            (sql) => ranges.resolveReads(sql),
          )
        : engine;
    this.startAfter = [...program.startAfter];
    this.inputs = stepInputs(
      program.join,
      this.startAfter,
      this.engine,
      program.tailVariants?.initial !== undefined,
    );
    this.header = program.header;
    this.out = new ExecutionOutput(this.engine, program);
    this.operator = program.aggregation
      ? new AggregationOperator(this.out)
      : program.session
        ? new SessionOperator(this.out, () => this.startAfter)
        : new TailOperator(this.out);
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
    // Nested queries stop after this one's last checkpoint (the finally below): what they hold
    // for it is then saved after what it has processed.
    const onAbort = () => this.wake?.();
    signal.addEventListener('abort', onAbort);
    this.status = 'running';
    // Executions running the same tail over the same stream share each range's read.
    const group = this.ranges.shared ? sharedGroupKey(p) : undefined;
    const leaveGroup = group ? this.ranges.shared?.join(group) : undefined;
    this.sharedGroup = leaveGroup ? group : undefined;
    const shared = this.ranges.shared;
    if (this.operator instanceof TailOperator)
      this.operator.sharedRead =
        group && leaveGroup && shared ? (sql, run) => shared.read(group, sql, run) : undefined;
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
      await this.operator.open();
      const policy = p.policy;
      const periodicMs = policy.shape !== 'tail' ? policy.periodicMs : undefined;
      const timeoutMs = policy.shape === 'window' ? policy.timeoutMs : undefined;
      const foldsOnTick =
        p.aggregation !== undefined &&
        periodicMs !== undefined &&
        timeoutMs === undefined &&
        !p.session &&
        !p.join;
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
        await this.resume(log, cursors, out);
      }
      this.markResumed();
      /** Run one event: journaled first when durable; a checkpoint after it when one is due. */
      const event = async (body: EventBody) => {
        if (log) await log.begin(body);
        this.inEvent = true;
        try {
          await this.apply(body, cursors, out);
        } finally {
          this.inEvent = false;
          this.eventsApplied++;
        }
        if (!log) return;
        log.end();
        if (log.due) await this.checkpoint(log, cursors);
      };

      while (!signal.aborted && !this.out.limitReached()) {
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
        const pacedUntil = Math.max(
          pacer && !this.backfill && pending.length > 0
            ? pacer.dueAt(pending[0]?.pending ?? 0, pending[0]?.pendingCommits ?? 0)
            : 0,
          // Views sharing a stream step together (shared-step-reads.ts dueAt).
          durability && this.sharedGroup && !this.backfill && pending.length > 0
            ? (this.ranges.shared?.dueAt(this.sharedGroup, cursors[0]?.after ?? 0) ?? 0)
            : 0,
        );
        if (pending.length > 0 && !deferred && !emitFirst && Date.now() >= pacedUntil) {
          // A window aggregation's watermark moves insert by insert (rows late against an earlier
          // insert of the same range are dropped). Over one stream its live steps cover several
          // inserts and judge each against the watermark the inserts before it left (`cuts`); with
          // ON UPDATE (an emit per insert) or several sources, a live step takes one insert.
          const windowed = this.program.aggregation?.window !== undefined && !this.backfill;
          const cutting =
            windowed &&
            cursors.length === 1 &&
            this.program.aggregation?.window?.insertLate !== undefined &&
            !(this.program.policy.shape === 'window' && this.program.policy.onUpdate);
          // A global aggregation or a session window EMIT ON UPDATE emits once per insert, as
          // Proton emits per block: its live steps take one insert each, however many arrived
          // during the last step.
          const perInsert =
            !this.backfill &&
            policy.shape !== 'tail' &&
            policy.onUpdate &&
            !policy.periodicMs &&
            ((this.program.aggregation !== undefined && policy.shape === 'global') ||
              (this.program.session !== undefined && policy.shape === 'window'));
          const stepRanges = cursors.map((c): [number, number] => {
            const oneCommit = (windowed && !cutting) || perInsert;
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
          if (durability && this.sharedGroup)
            this.ranges.shared?.stepped(this.sharedGroup, performance.now() - t0);
          if (pacedByChildren) this.nextPeriodic = Math.min(this.nextPeriodic, this.lastStepAt);
          continue;
        }
        const now = Date.now();
        if (now >= this.nextPeriodic) {
          this.steppedForTick = false;
          // At least 1 ms ahead: a period below the clock's grain (`1us`, `1ns`, accepted as in
          // Proton) runs every millisecond instead of re-arming in the past and spinning.
          this.nextPeriodic = now + Math.max(periodicMs ?? 0, 1);
          if (this.newSinceEmit && this.operator.emitsOnTick) await event({ kind: 'periodic' });
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
          await this.checkpoint(log, cursors);
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
      if (log && (log.hasUnsaved || stale)) await this.checkpoint(log, cursors, true);
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
      await this.operator.close();
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
    return { ...this.out.progress, sources: this.sourceLags() };
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
    return this.out.stepCalls();
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
    const steps = this.out.pipelineSteps(
      sources.length,
      sources.map((n) => n.id),
      this.status,
    );
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
  private async apply(event: EventBody, cursors: SourceCursor[], sink: ResultSink): Promise<void> {
    switch (event.kind) {
      case 'step': {
        const hadRows = await this.step(
          cursors,
          event.ranges,
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
        await this.operator.backfillEnd(sink);
        return;
      case 'periodic':
        this.newSinceEmit = false;
        await this.operator.periodic(sink);
        return;
      case 'timeout':
        // EMIT ... TIMEOUT: no rows for a while; every open window or session is final.
        this.lastRowsAt = Number.POSITIVE_INFINITY;
        await this.operator.timeout(sink);
        return;
    }
  }

  // --- durability ---

  /** Engine tables the execution reads later, by a name stable across runs. */
  private liveTables(): Record<string, string> {
    const tables: Record<string, string> = { ...this.operator.tables() };
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
  private async resume(log: EventLog, cursors: SourceCursor[], sink: ResultSink): Promise<void> {
    const store = log.durability.store;
    const checkpoint = await store.load();
    if (!checkpoint) {
      // The start position is durable before the first event.
      await this.checkpoint(log, cursors, true);
      return;
    }
    this.restoreState(checkpoint.state as SavedState, cursors);
    const tables = checkpoint.tables;
    await this.operator.restoreTables(tables);
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
      await this.apply(entry, cursors, sink);
      log.end();
    }
  }

  /** Save a checkpoint as of the end of the last event. */
  private async checkpoint(log: EventLog, cursors: SourceCursor[], force = false): Promise<void> {
    if (!force && !log.hasUnsaved) return;
    await this.operator.beforeCheckpoint();
    const processedSn: Record<string, number> = {};
    for (const c of cursors) processedSn[c.source.key] = Math.max(processedSn[c.source.key] ?? -1, c.after);
    const keepAfter = this.derivedOutput?.keepAfter;
    await log.save({
      processedSn,
      processedTime: this.out.progress.lastEventTime,
      state: this.saveState(cursors),
      tables: this.liveTables(),
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
      ...this.out.save(),
      batch: 0,
      lastEmittedBatch: 0,
      dedupSteps: this.dedupSteps,
      newSinceEmit: this.newSinceEmit,
      backfill: this.backfill,
      timedOut: !Number.isFinite(this.lastRowsAt),
      nextPeriodic: Number.isFinite(this.nextPeriodic) ? this.nextPeriodic : null,
      watermarks: [],
      versionBases: [],
      substreamVersions: [],
      carried: [],
      carriedByKey: [],
      ...this.operator.save(),
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
    this.out.restore(saved);
    this.dedupSteps = saved.dedupSteps;
    this.newSinceEmit = saved.newSinceEmit;
    this.backfill = saved.backfill;
    this.lastRowsAt = saved.timedOut ? Number.POSITIVE_INFINITY : Date.now();
    // Periodic emits keep their cadence across a restart: one overdue fires after the first steps.
    if (saved.nextPeriodic !== null && Number.isFinite(this.nextPeriodic))
      this.nextPeriodic = Math.min(this.nextPeriodic, saved.nextPeriodic);
    this.operator.restore(saved);
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
    this.out.progress.scannedRows += rows;
    await this.admitDedupKeys(values);
    const parts = await this.inputs.parts(values);
    // A join whose new rows met nothing gave the aggregation no rows: no periodic emit for it.
    const reached = await this.operator.step({ values, parts, sink, backfill, cuts });
    for (const c of cursors) c.after = values[P.hi(c.source.index)] ?? c.after;
    return rows > 0 && reached;
  }

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
  private timed(name: string, fn: () => Promise<unknown>): Promise<string> {
    return this.out.timed(name, fn);
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
