// The state of one running case: the queries it started (by the case's own query ids, which the
// server does not know: Tributary assigns its own ids, returned in the first `query` event), what
// each statement produced, and notes. Waiting for a query to run (`depends_on`), for it to be done
// (`depends_on_done`) and stopping queries (`kill`, `query_end_timer`, end of case) go through here.

import type { TributaryApi } from './api-client.ts';
import type { ActualResult } from './result-compare.ts';
import type { QueryStream } from './sse-client.ts';
import { AbortedError, type Deferred, deferred, sleep, within } from './timing.ts';

/** An error of the runner's own checks (depends_on, exist, ingest), as opposed to a query error. */
export class RunnerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunnerError';
  }
}

const RECOVER_FROM = /^\s*recover\s+from\s+'([^']*)'\s*;?\s*$/i;

/** One statement's query, from dispatch to end. */
export class QueryRun {
  /** pending: waiting (depends_on, wait); starting: request sent; running: `query` event seen. */
  state: 'pending' | 'starting' | 'running' | 'ended' = 'pending';
  stream: QueryStream | undefined;
  result: ActualResult | undefined;
  /** Resolves true once running, false if it ended without ever running. */
  readonly started: Deferred<boolean> = deferred<boolean>();
  /** Resolves when the statement is completely done (its after-actions included). */
  readonly done: Deferred<void> = deferred<void>();

  constructor(
    readonly seq: number,
    /** The case's query id (`query_id` of the statement), or undefined. */
    readonly queryId: string | undefined,
    readonly sql: string,
    readonly background: boolean,
    readonly item: Record<string, unknown>,
  ) {
    this.recovers = RECOVER_FROM.exec(sql)?.[1];
  }

  /**
   * The case query id a `RECOVER FROM '<id>'` recovers: in Proton the recovered query runs under
   * that id, so `depends_on` and `kill` of that id reach it.
   */
  readonly recovers: string | undefined;

  get ended(): boolean {
    return this.state === 'ended';
  }

  markEnded(): void {
    this.state = 'ended';
    this.started.resolve(false);
  }
}

export interface StatementResult {
  queryId: string;
  result: ActualResult;
}

export interface CaseContextOptions {
  api: TributaryApi;
  signal: AbortSignal;
  /** Label for log lines and query names, e.g. `0000_smoke_case/3`. */
  label: string;
  log?: (line: string) => void;
}

/** How long a cancel may take before the connection is simply closed. */
const CANCEL_GRACE_MS = 10_000;

export class CaseContext {
  readonly api: TributaryApi;
  readonly signal: AbortSignal;
  readonly label: string;
  readonly runs: QueryRun[] = [];
  readonly results: StatementResult[] = [];
  /** Problems of the runner's checks that do not end the case (the original went on too). */
  readonly notes: string[] = [];
  /** Problems that make the case fail whatever its results (a failed ingest, a timeout). */
  readonly fatal: string[] = [];
  readonly background: Promise<void>[] = [];
  private readonly t0 = Date.now();
  private readonly logFn: ((line: string) => void) | undefined;

  constructor(opts: CaseContextOptions) {
    this.api = opts.api;
    this.signal = opts.signal;
    this.label = opts.label;
    this.logFn = opts.log;
  }

  log(message: string): void {
    if (this.logFn)
      this.logFn(`  [${this.label} +${((Date.now() - this.t0) / 1000).toFixed(1)}s] ${message}`);
  }

  newRun(
    queryId: string | undefined,
    sql: string,
    background: boolean,
    item: Record<string, unknown>,
  ): QueryRun {
    const run = new QueryRun(this.runs.length, queryId, sql, background, item);
    this.runs.push(run);
    return run;
  }

  /** Record what a statement produced (only statements with a query id are checked). */
  record(run: QueryRun): void {
    if (run.queryId !== undefined && run.result)
      this.results.push({ queryId: run.queryId, result: run.result });
  }

  /** The result the check uses for a query id: the last one recorded, as the original did. */
  resultOf(queryId: string): ActualResult | undefined {
    for (let i = this.results.length - 1; i >= 0; i--) {
      if (this.results[i]!.queryId === queryId) return this.results[i]!.result;
    }
    return undefined;
  }

  /** The runs of a case query id, the queries recovering it included. */
  private runsOf(queryId: string): QueryRun[] {
    return this.runs.filter((r) => r.queryId === queryId || r.recovers === queryId);
  }

  /**
   * `depends_on`: wait until a query with that id is running (its `query` event arrived). True when
   * it runs (or ran); false when it ended without running or did not start within the time.
   */
  async waitRunning(queryId: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = this.runsOf(queryId);
      const run = runs[runs.length - 1];
      if (run) {
        const started = await within(run.started.promise, Math.max(0, deadline - Date.now()), this.signal);
        return started === true;
      }
      if (Date.now() >= deadline) return false;
      await sleep(100, this.signal);
    }
  }

  /** `depends_on_done`: wait (at most timeoutMs) until the query with that id is done. */
  async waitDone(queryId: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = this.runsOf(queryId);
      const run = runs[runs.length - 1];
      if (run) {
        await within(run.done.promise, Math.max(0, deadline - Date.now()), this.signal);
        return;
      }
      if (Date.now() >= deadline) return;
      await sleep(100, this.signal);
    }
  }

  /** Stop one query and wait for its connection to end (closing it if the cancel is not honoured). */
  async stopRun(run: QueryRun, signal: AbortSignal | undefined = this.signal): Promise<void> {
    if (run.ended || run.state === 'pending') return;
    if (run.state === 'starting') {
      // the request is out but the query has not announced itself yet
      await within(run.started.promise, 2_000, signal);
    }
    const stream = run.stream;
    if (!stream || stream.isEnded) return;
    if (stream.id !== undefined) {
      this.log(`cancel ${run.queryId ?? `#${run.seq}`} (server id ${stream.id})`);
      try {
        await this.api.cancel(stream.id, signal ? { signal } : {});
      } catch (e) {
        if (e instanceof AbortedError) throw e;
        this.notes.push(`cancel of query ${run.queryId ?? `#${run.seq}`} failed: ${(e as Error).message}`);
      }
      const ended = await within(stream.ended.promise, CANCEL_GRACE_MS, signal);
      if (ended) return;
      this.notes.push(
        `query ${run.queryId ?? `#${run.seq}`} did not end within 10s of its cancel; connection closed`,
      );
    }
    stream.close();
  }

  /** The server's id of the last query started under a case query id (undefined before it announced itself). */
  serverIdOf(queryId: string): string | undefined {
    const runs = this.runs.filter((r) => r.queryId === queryId && r.stream?.id !== undefined);
    return runs[runs.length - 1]?.stream?.id;
  }

  /**
   * `kill` of a case query id: stop every query of that id that runs (pending ones are not yet
   * known), and every query running under the same server id (a RECOVER FROM keeps the id of the
   * query it recovers, as in Proton, whatever case query id the case gave it).
   */
  async stopQueries(queryId: string): Promise<void> {
    const own = this.runsOf(queryId);
    const serverIds = new Set(own.map((r) => r.stream?.id).filter((id) => id !== undefined));
    const sameServerId = this.runs.filter(
      (r) => !own.includes(r) && r.stream?.id !== undefined && serverIds.has(r.stream.id),
    );
    for (const run of [...own, ...sameServerId]) await this.stopRun(run);
  }

  /**
   * End of the case: cancel every query still running and close every connection. Runs even after
   * the case's signal fired, so it does not use that signal.
   */
  async stopAll(): Promise<void> {
    const live = this.runs.filter((r) => !r.ended && r.stream && !r.stream.isEnded);
    await Promise.all(
      live.map(async (run) => {
        const stream = run.stream!;
        if (stream.id !== undefined) {
          try {
            await this.api.cancel(stream.id, { timeoutMs: 5_000 });
          } catch {
            // closing the connection below cancels it too
          }
          await within(stream.ended.promise, 2_000);
        }
        stream.close();
      }),
    );
    await within(Promise.allSettled(this.background), 5_000);
  }
}
