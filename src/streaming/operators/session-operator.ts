import type { ResultSink } from '../result-sink.ts';
import { SESSION_ROWS, sessionRowsSql } from '../session-planner.ts';
import { type Session, type SessionRow, SessionTracker } from '../session-tracker.ts';
import { P } from '../sql-template.ts';
import { intervalMillis } from '../window-interval.ts';
import type { ExecutionOutput } from './execution-output.ts';
import type { SavedState } from './saved-state.ts';
import { OperatorHooks, type StepArgs, type StepOperator } from './step-operator.ts';

/**
 * Session windows: each step assigns its rows to sessions (session-tracker.ts keeps them, per
 * substream) and emits the sessions that closed, plus the open ones touched with ON UPDATE.
 */
export class SessionOperator extends OperatorHooks implements StepOperator {
  readonly emitsOnTick = true;
  private readonly sessions: SessionTracker;
  /** Emits per substream so far (emit_version() of session windows). */
  private readonly substreamVersions = new Map<string, number>();

  constructor(
    private readonly out: ExecutionOutput,
    /** Per source: where the first run of the execution started (a restore takes it back). */
    private readonly startAfter: () => readonly number[],
  ) {
    super();
    const program = out.program;
    const policy = program.policy;
    this.sessions = new SessionTracker({
      ...program.session!.options,
      delayMs: policy.shape === 'window' && policy.delay ? intervalMillis(policy.delay) : 0,
    });
  }

  async step({ values, sink }: StepArgs): Promise<boolean> {
    const session = this.out.program.session!;
    const text = await this.out.timed('SessionAssign', () =>
      this.out.engine.query(session.assign.fill(values)),
    );
    const rows: SessionRow[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      const [sn, ts, key, start, end] = JSON.parse(line) as [number, number | string, string, number, number];
      rows.push({ sn, ts: Number(ts), key, start: start === 1, end: end === 1 });
    }
    const closed = this.sessions.process(rows);
    if (rows.length) {
      const last = Math.max(...rows.map((r) => r.ts));
      this.out.progress.lastEventTime = Math.max(this.out.progress.lastEventTime, last);
    }
    const policy = this.out.program.policy;
    const open = policy.shape === 'window' && policy.onUpdate ? this.sessions.touched() : [];
    await this.emit([...closed, ...open], sink);
    return true;
  }

  /** PERIODIC: the open sessions that got rows since the last tick. */
  async periodic(sink: ResultSink): Promise<void> {
    await this.emit(this.sessions.touched(), sink);
  }

  async timeout(sink: ResultSink): Promise<void> {
    await this.emit(this.sessions.closeAll(), sink);
  }

  save(): Partial<SavedState> {
    return { sessions: this.sessions.save(), substreamVersions: [...this.substreamVersions] };
  }

  restore(saved: SavedState): void {
    for (const [k, v] of saved.substreamVersions) this.substreamVersions.set(k, v);
    if (saved.sessions) this.sessions.restore(saved.sessions);
  }

  private async emit(sessions: readonly Session[], sink: ResultSink): Promise<void> {
    const withRows = sessions.filter((s) => s.sns.length > 0);
    if (withRows.length === 0) return;
    const program = this.out.program;
    const session = program.session!;
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const s of withRows)
      for (const sn of s.sns) {
        if (sn < lo) lo = sn;
        if (sn > hi) hi = sn;
      }
    const ranges: Record<string, number> = {};
    const startAfter = this.startAfter();
    for (const [i, src] of program.sources.entries()) {
      ranges[P.lo(src.index)] = lo - 1;
      ranges[P.hi(src.index)] = hi;
      ranges[P.start(src.index)] = startAfter[i] ?? -1;
    }
    for (const s of withRows) {
      s.version = this.substreamVersions.get(s.key) ?? 0;
      this.substreamVersions.set(s.key, s.version + 1);
    }
    const rowsSql = sessionRowsSql(session.sourceRows.fill(ranges), withRows);
    const sql =
      session.emit.fill({ ...ranges, [SESSION_ROWS]: rowsSql, [P.emitVersion]: this.out.emitVersion }) +
      this.out.limitClause();
    const text = await this.out.timed('Emit', () =>
      this.out.engine.query(sql, { settings: { max_query_size: 268435456 } }),
    );
    const rows = this.out.rows(text);
    if (rows.length === 0) return;
    this.out.emitVersion++;
    await this.out.output(rows, sink, undefined);
  }
}
