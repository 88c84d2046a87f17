// Runs the selected cases of one suite file: creates its table_schemas streams and runs its setup
// (once, before the first case that runs), then the cases one after another. A failed case is run
// again up to `retries` times (the original retried failed cases too: streaming cases depend on
// wall-clock timing); a case that passed only on a later attempt is reported as such.

import type { TributaryApi } from './api-client.ts';
import { CaseContext } from './case-context.ts';
import { type CaseDef, caseIdText, type SuiteFile } from './case-file.ts';
import { runCase } from './case-runner.ts';
import { caseSkipReason } from './case-selection.ts';
import { runInputs } from './input-ingest.ts';
import type { CaseReport } from './report.ts';
import { describeActual } from './result-compare.ts';
import { recreateStatements } from './schema-setup.ts';
import { runQuiet, runStatement } from './statement-runner.ts';
import { AbortedError, sleep, timeoutSignal, within } from './timing.ts';

export interface SuiteEnv {
  api: TributaryApi;
  retries: number;
  timeoutS: number;
  /** Progress lines (--verbose). */
  log?: (line: string) => void;
  /** Warnings printed with the results (setup statements that failed, ...). */
  warn: (line: string) => void;
}

const SETUP_TIMEOUT_MS = 300_000;
/** Pause before running a failed case again (the original paused 5 s between retry rounds). */
const RETRY_PAUSE_MS = 2_000;
/** The original slept 1 s after a suite's setup. */
const AFTER_SETUP_MS = 1_000;

/** Create the suite's streams and run its setup. Returns why it failed, if it did. */
export async function setupSuite(
  env: SuiteEnv,
  suite: SuiteFile,
  parent?: AbortSignal,
): Promise<string | undefined> {
  const { signal, dispose } = timeoutSignal(parent, SETUP_TIMEOUT_MS, 'suite setup timed out');
  const ctx = new CaseContext({
    api: env.api,
    signal,
    label: `${suite.label}/setup`,
    ...(env.log ? { log: env.log } : {}),
  });
  try {
    for (const schema of suite.config.table_schemas ?? []) {
      const [drop, ...create] = recreateStatements(schema);
      if (drop) await runQuiet(ctx, drop);
      for (const sql of create) {
        const result = await runQuiet(ctx, sql);
        if (result.kind !== 'rows') return `creating ${schema.name}: ${describeActual(result)}`;
      }
    }
    const setup = suite.config.setup;
    for (const st of Array.isArray(setup?.statements) ? setup.statements : []) await runStatement(ctx, st);
    for (const run of ctx.runs) {
      if (run.result && run.result.kind !== 'rows')
        env.warn(
          `${suite.label} setup: \`${run.sql.replace(/\s+/g, ' ').trim()}\`: ${describeActual(run.result)}`,
        );
    }
    if (Array.isArray(setup?.inputs)) {
      await runInputs(ctx, setup.inputs, suite.config.table_schemas);
      if (ctx.fatal.length > 0) return ctx.fatal.join('; ');
    }
    await sleep(AFTER_SETUP_MS, signal);
    return undefined;
  } catch (e) {
    if (e instanceof AbortedError)
      return signal.reason instanceof Error ? signal.reason.message : 'interrupted';
    return e instanceof Error ? e.message : String(e);
  } finally {
    await ctx.stopAll();
    await within(Promise.allSettled(ctx.background), 5_000);
    dispose();
  }
}

/** Run the given cases of a suite, reporting each as it completes. */
export async function runSuite(
  env: SuiteEnv,
  suite: SuiteFile,
  cases: readonly CaseDef[],
  onCase: (r: CaseReport) => void,
  signal?: AbortSignal,
): Promise<void> {
  const plans = cases.map((c) => ({ c, skip: caseSkipReason(suite, c) }));
  let setupError: string | undefined;
  let setupDone = false;
  for (const { c, skip } of plans) {
    const base = {
      suite: suite.label,
      file: suite.file,
      id: caseIdText(c),
      ...(c.name ? { name: String(c.name) } : {}),
    };
    if (skip !== undefined) {
      onCase({ ...base, status: 'skip', reason: skip, attempts: 0, durationMs: 0, details: [] });
      continue;
    }
    if (signal?.aborted) {
      onCase({
        ...base,
        status: 'fail',
        reason: 'not run: the run was interrupted',
        attempts: 0,
        durationMs: 0,
        details: [],
      });
      continue;
    }
    if (!setupDone) {
      setupDone = true;
      env.log?.(`  [${suite.label}] setup`);
      setupError = await setupSuite(env, suite, signal);
    }
    if (setupError !== undefined) {
      onCase({
        ...base,
        status: 'fail',
        reason: `suite setup failed: ${setupError}`,
        attempts: 0,
        durationMs: 0,
        details: [],
      });
      continue;
    }
    const maxAttempts = 1 + Math.max(0, env.retries);
    let attempt = 0;
    let total = 0;
    for (;;) {
      attempt++;
      env.log?.(`  [${suite.label}/${caseIdText(c)}] attempt ${attempt}`);
      const outcome = await runCase(
        { api: env.api, suite, case: c, timeoutS: env.timeoutS, ...(env.log ? { log: env.log } : {}) },
        signal,
      );
      total += outcome.durationMs;
      if (outcome.status === 'pass') {
        onCase({ ...base, status: 'pass', attempts: attempt, durationMs: total, details: [] });
        break;
      }
      if (attempt >= maxAttempts || signal?.aborted) {
        onCase({
          ...base,
          status: 'fail',
          ...(outcome.summary ? { reason: outcome.summary } : {}),
          attempts: attempt,
          durationMs: total,
          details: outcome.details,
        });
        break;
      }
      try {
        await sleep(RETRY_PAUSE_MS, signal);
      } catch {
        // interrupted: the next loop turn reports the failure
      }
    }
  }
}
