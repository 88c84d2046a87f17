// Runs one case: reset its input streams, walk its steps, stop its background queries the way the
// original runner did at the end of a case, then check every expected result.
//
// Timing follows the original, which sent a step's statements to an executor and, before the next
// inputs step, slept the step's "max wait" (the largest `wait` of its streaming statements plus the
// sum of the `wait`s of its table statements) from the moment the statements were sent; then 1 s.
// At the end of the case, each streaming query still running is stopped in turn, after sleeping its
// `query_end_timer` (counted from the end of the steps, as the original did).

import type { TributaryApi } from './api-client.ts';
import { CaseContext } from './case-context.ts';
import { type CaseDef, type StepItem, type SuiteFile, textOf } from './case-file.ts';
import { runInputs } from './input-ingest.ts';
import { checkExpectation } from './result-compare.ts';
import { resetPlan } from './schema-setup.ts';
import { isBackground, runQuiet, runStatement } from './statement-runner.ts';
import { AbortedError, seconds, sleep, timeoutSignal, within } from './timing.ts';

export interface CaseOutcome {
  status: 'pass' | 'fail';
  /** One line: why it failed. */
  summary?: string;
  /** Diff lines and notes. */
  details: string[];
  durationMs: number;
}

export interface CaseEnv {
  api: TributaryApi;
  suite: SuiteFile;
  case: CaseDef;
  /** Per-case time limit in seconds (see caseTimeoutS). */
  timeoutS: number;
  log?: (line: string) => void;
}

const WAIT_KEYS = [
  'wait',
  'kill_wait',
  'exist_wait',
  'query_end_timer',
  'drop_view_wait',
  'drop_stream_wait',
];
/** How long the end of a case waits for a background query to start before stopping it. */
const START_WAIT_MS = 30_000;
/** Waits bounded only by the case's own time limit. */
const FOREVER_MS = 2_000_000_000;

function itemsOf(c: CaseDef, key: 'statements' | 'inputs'): StepItem[] {
  return c.steps.flatMap((s) => (Array.isArray(s[key]) ? (s[key] as StepItem[]) : []));
}

/** The seconds a case sleeps by script (its waits, timers and kill waits). */
export function scriptedSeconds(c: CaseDef): number {
  let total = 0;
  for (const item of [...itemsOf(c, 'statements'), ...itemsOf(c, 'inputs')]) {
    for (const k of WAIT_KEYS) total += seconds(item[k]);
  }
  return total;
}

/**
 * The effective time limit of a case, in seconds: the given limit, raised to the case's scripted
 * waits plus half the limit when those are longer (default 60: at least waits + 30 s).
 */
export function caseTimeoutS(c: CaseDef, timeoutS: number): number {
  return Math.max(timeoutS, scriptedSeconds(c) + Math.ceil(timeoutS / 2));
}

/** The original runner's max_wait of a statements step. */
export function maxWaitOf(statements: readonly StepItem[]): number {
  let max = 0;
  for (const st of statements) {
    const w = seconds(st.wait);
    if (isBackground(st)) max = Math.max(max, w);
    else max += w;
  }
  return max;
}

/** Stop the background queries still running at the end of the steps, in the order they started. */
async function stopBackground(ctx: CaseContext): Promise<void> {
  for (const run of ctx.runs) {
    if (!run.background || run.ended) continue;
    const terminate =
      textOf(run.item, 'terminate') ?? (textOf(run.item, 'query_type') === 'stream' ? 'auto' : undefined);
    if (terminate !== 'auto' && terminate !== 'manual') {
      await within(run.done.promise, FOREVER_MS, ctx.signal);
      continue;
    }
    await within(run.started.promise, START_WAIT_MS, ctx.signal);
    if (run.ended) continue;
    const timer = seconds(run.item.query_end_timer);
    if (timer > 0) {
      ctx.log(`query_end_timer ${run.queryId ?? ''}: ${timer}s`);
      await sleep(timer * 1000, ctx.signal);
    }
    await ctx.stopRun(run);
  }
  await within(Promise.all(ctx.background), FOREVER_MS, ctx.signal);
}

async function walkSteps(ctx: CaseContext, env: CaseEnv): Promise<void> {
  const schemas = env.suite.config.table_schemas;
  for (const sql of resetPlan(itemsOf(env.case, 'inputs'), schemas)) await runQuiet(ctx, sql);
  let stepStart = Date.now();
  let maxWaitMs = 0;
  let inputsSinceStatements = 0;
  for (const step of env.case.steps) {
    if (Array.isArray(step.statements)) {
      stepStart = Date.now();
      maxWaitMs = maxWaitOf(step.statements) * 1000;
      inputsSinceStatements = 0;
      for (const st of step.statements) await runStatement(ctx, st);
    } else if (Array.isArray(step.inputs)) {
      // the first inputs step after statements waits until max_wait after they were sent; further
      // inputs steps sleep max_wait again (the original slept it before every inputs step)
      const wait = inputsSinceStatements === 0 ? stepStart + maxWaitMs - Date.now() : maxWaitMs;
      inputsSinceStatements++;
      await sleep(wait, ctx.signal);
      await runInputs(ctx, step.inputs, schemas);
    }
  }
  await stopBackground(ctx);
}

function check(ctx: CaseContext, c: CaseDef): { failures: string[]; details: string[] } {
  const failures: string[] = [];
  const details: string[] = [];
  if (!c.expected_results) {
    failures.push('the case has no expected_results (the original runner failed such cases)');
    return { failures, details };
  }
  for (const entry of c.expected_results) {
    const id = String(entry.query_id);
    const verdict = checkExpectation(entry.expected_results, ctx.resultOf(id));
    if (verdict.ok) continue;
    failures.push(`query ${id}: ${verdict.summary}`);
    details.push(`query ${id}: ${verdict.summary}`, ...verdict.details.map((d) => `  ${d}`));
  }
  return { failures, details };
}

export async function runCase(env: CaseEnv, parent?: AbortSignal): Promise<CaseOutcome> {
  const t0 = Date.now();
  const limitS = caseTimeoutS(env.case, env.timeoutS);
  const { signal, dispose } = timeoutSignal(parent, limitS * 1000, `timed out after ${limitS}s`);
  const label = `${env.suite.label}/${String(env.case.id)}`;
  const ctx = new CaseContext({ api: env.api, signal, label, ...(env.log ? { log: env.log } : {}) });
  try {
    await walkSteps(ctx, env);
  } catch (e) {
    if (e instanceof AbortedError || signal.aborted) {
      const why = signal.reason instanceof Error ? signal.reason.message : 'interrupted';
      ctx.fatal.push(`case ${why}`);
    } else {
      ctx.fatal.push(`runner error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    }
  } finally {
    await ctx.stopAll();
    dispose();
  }
  const { failures, details } = check(ctx, env.case);
  const allFailures = [...ctx.fatal, ...failures];
  const notes = ctx.notes.map((n) => `note: ${n}`);
  const durationMs = Date.now() - t0;
  if (allFailures.length === 0) return { status: 'pass', details: [], durationMs };
  return {
    status: 'fail',
    summary: allFailures[0],
    details: [...ctx.fatal.map((f) => `fatal: ${f}`), ...details, ...notes],
    durationMs,
  };
}
