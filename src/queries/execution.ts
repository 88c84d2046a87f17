import type { ExecutionProgress, PipelineStep, ResultSink } from '../streaming/result-sink.ts';
import type { QueryAnalysis, ResultColumn } from './query-types.ts';
import type { SessionSettings } from './session-settings.ts';

/**
 * What the planner makes of a statement: either a statement with no result (DDL, INSERT), or an
 * execution that produces rows with a known header, bounded (historical) or not (streaming).
 */
export type Plan = StatementPlan | RowsPlan;

export interface StatementPlan {
  kind: 'statement';
  analysis: QueryAnalysis;
  /** Run the statement to completion. */
  run(signal: AbortSignal): Promise<void>;
}

export interface RowsPlan {
  kind: 'rows';
  analysis: QueryAnalysis;
  header: ResultColumn[];
  /** False for a historical query, which ends by itself. */
  streaming: boolean;
  /** The id the query must run under (a subscribed query's id owns its checkpoints); else a new one. */
  readonly queryId?: string;
  /** Produce rows into `sink` until done, the LIMIT is reached, or `signal` aborts. */
  run(sink: ResultSink, signal: AbortSignal): Promise<void>;
  progress(): ExecutionProgress;
  pipeline(): PipelineStep[];
  /** Release what planning set up, for a plan that will not run. */
  dispose?(): Promise<void>;
}

/** Options the planner takes from the request. */
export interface PlanOptions {
  /** Which execution the client asked for; undefined lets the planner decide from the SQL. */
  type?: 'historical' | 'ddl' | 'streaming';
  /** `/exec`'s type, enforced before anything is planned (see checkExecType in sql-planner.ts). */
  execType?: 'historical' | 'ddl';
  /** For historical execution: stop the engine query after this many milliseconds. */
  timeoutMs?: number;
  /**
   * Settings of earlier `SET` statements of the same script (session-settings.ts): they apply to
   * the statement as if written in its SETTINGS clause, under its own.
   */
  settings?: SessionSettings;
  /** The user running it (for permission checks and audit). */
  user: { username: string; role: 'admin' | 'read_only' };
}

export interface QueryPlanner {
  plan(sql: string, options: PlanOptions): Promise<Plan>;
}
