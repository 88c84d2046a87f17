import type { Logger } from '../log/logger.ts';
import type { RowsPlan } from '../queries/execution.ts';
import type { Durability } from '../streaming/durability.ts';
import { isDurablePlan } from '../streaming/durable-plan.ts';
import type { ResultSink } from '../streaming/result-sink.ts';
import type { PauseGate } from './pause-gate.ts';

/**
 * Status of a materialized view (the contract's enum, docs/operations.md "Materialized views"):
 * - `BuildingPipeline`: its streaming query is being planned (at start, create or resume);
 * - `ExecutingPipeline`: running, writing results into its target;
 * - `Paused`: paused (SQL or REST); nothing is written, its position is kept;
 * - `Error`: its query failed (`last_error_message`); it is waiting to retry (backoff);
 * - `AutoRecovering`: planning again after a failure;
 * - `Suspended`: stopped (server shutdown, DROP VIEW), or its query ended by itself (LIMIT).
 */
export type MaterializedViewStatus =
  | 'BuildingPipeline'
  | 'ExecutingPipeline'
  | 'Paused'
  | 'Error'
  | 'AutoRecovering'
  | 'Suspended';

export interface RetryPolicy {
  /** First wait after a failure (ms); doubles with each failure in a row. */
  baseMs: number;
  /** Longest wait (ms). */
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1000, maxMs: 60_000 };

export interface RunnerOptions {
  /** `db.name`, for logs. */
  key: string;
  /** Plan the view's streaming query (as POST /queries plans a streaming SELECT). */
  plan(): Promise<RowsPlan>;
  /** Where its rows go (the target writer, behind the pause gate). */
  sink: ResultSink;
  gate: PauseGate;
  retry: RetryPolicy;
  logger?: Logger;
  /**
   * The view's checkpoints: each run (start, restart, retry after a failure) resumes from the last
   * checkpoint and replays its journal, and the target drops what it already holds (exactly once).
   */
  durability?: Durability;
}

/** The execution's processed positions, if it exposes them (stats: lagging_status). */
interface WithPositions {
  processedSn?(): Readonly<Record<string, number>>;
}

/**
 * Runs one materialized view in the background: plans its query, runs the execution into its
 * target, and on a failure records the error and plans again after an exponential backoff (capped).
 * One view's failure never reaches another: each runner owns its execution and its loop.
 */
export class MaterializedViewRunner {
  private statusValue: MaterializedViewStatus = 'Suspended';
  private statusAt = Date.now();
  private lastErrorValue = '';
  private lastErrorAt = 0;
  private failures = 0;
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private wakeBackoff: (() => void) | undefined;
  private execution: RowsPlan | undefined;
  private startedAt = 0;

  constructor(private readonly o: RunnerOptions) {}

  get status(): MaterializedViewStatus {
    return this.statusValue;
  }

  get statusTs(): number {
    return this.statusAt;
  }

  get lastError(): { message: string; at: number } {
    return { message: this.lastErrorValue, at: this.lastErrorAt };
  }

  /** Restarts after failures since the last start. */
  get retries(): number {
    return this.failures;
  }

  /** The running execution (undefined between attempts). */
  get current(): RowsPlan | undefined {
    return this.execution;
  }

  /** Per source `db.name`: the last `_tp_sn` the execution has processed. */
  processedSn(): Readonly<Record<string, number>> {
    return (this.execution as (RowsPlan & WithPositions) | undefined)?.processedSn?.() ?? {};
  }

  start(): void {
    if (this.loop) return;
    this.stopped = false;
    this.loop = this.run().finally(() => {
      this.loop = undefined;
    });
  }

  /** Stop the execution and the retry loop; answers once it has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    this.wakeBackoff?.();
    this.o.gate.release();
    await this.loop;
    this.setStatus('Suspended');
  }

  /** Pause: no more writes; `sync` waits for a write in flight. */
  async pause(sync: boolean): Promise<void> {
    this.o.gate.close();
    if (this.statusValue === 'ExecutingPipeline' || this.statusValue === 'BuildingPipeline')
      this.setStatus('Paused');
    if (sync) await this.o.gate.idle();
  }

  /** Resume from where it paused (the execution kept its position). */
  resume(): void {
    this.o.gate.open();
    if (this.statusValue === 'Paused')
      this.setStatus(this.execution ? 'ExecutingPipeline' : 'BuildingPipeline');
  }

  private settled: Array<() => void> = [];

  /** Resolves once the view is executing (or has failed, or stopped): resume's `sync`. */
  settledAfterResume(): Promise<void> {
    if (
      this.statusValue !== 'BuildingPipeline' &&
      this.statusValue !== 'AutoRecovering' &&
      this.statusValue !== 'Paused'
    )
      return Promise.resolve();
    return new Promise((resolve) => this.settled.push(resolve));
  }

  private setStatus(s: MaterializedViewStatus): void {
    if (s === this.statusValue) return;
    this.statusValue = s;
    this.statusAt = Date.now();
    if (s === 'ExecutingPipeline' || s === 'Error' || s === 'Suspended') {
      const waiting = this.settled;
      this.settled = [];
      for (const w of waiting) w();
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const abort = new AbortController();
      this.abort = abort;
      this.setStatus(
        this.o.gate.isClosed ? 'Paused' : this.failures === 0 ? 'BuildingPipeline' : 'AutoRecovering',
      );
      try {
        const plan = await this.o.plan();
        if (this.stopped) {
          await plan.dispose?.();
          break;
        }
        this.execution = plan;
        this.startedAt = Date.now();
        this.setStatus(this.o.gate.isClosed ? 'Paused' : 'ExecutingPipeline');
        await runExecution(plan, this.o.sink, abort.signal, this.o.durability);
        this.execution = undefined;
        if (!this.stopped) {
          // Only a LIMIT ends a streaming query by itself: the view has nothing more to do.
          this.setStatus('Suspended');
          return;
        }
      } catch (e) {
        this.execution = undefined;
        if (this.stopped) break;
        // A run that went well for longer than the longest backoff starts the count again.
        if (this.startedAt > 0 && Date.now() - this.startedAt > this.o.retry.maxMs) this.failures = 0;
        this.failures++;
        this.lastErrorValue = e instanceof Error ? e.message : String(e);
        this.lastErrorAt = Date.now();
        this.setStatus('Error');
        const wait = Math.min(this.o.retry.baseMs * 2 ** (this.failures - 1), this.o.retry.maxMs);
        this.o.logger?.warn(
          { view: this.o.key, err: e, retryInMs: wait },
          'materialized view failed; it will retry',
        );
        await this.backoff(wait);
      }
    }
  }

  private backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeBackoff = undefined;
        resolve();
      }
      this.wakeBackoff = done;
    });
  }
}

/** Run the view's execution, durably when it has checkpoints (every streaming execution can). */
function runExecution(
  plan: RowsPlan,
  sink: ResultSink,
  signal: AbortSignal,
  durability: Durability | undefined,
): Promise<void> {
  if (durability && isDurablePlan(plan)) return plan.run(sink, signal, durability);
  return plan.run(sink, signal);
}
