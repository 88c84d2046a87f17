import { err } from '../errors/tributary-error.ts';
import { parseScript } from '../sql/parser/parse.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../sql/syntax/syntax-error.ts';
import type { Plan, PlanOptions, QueryPlanner } from './execution.ts';
import { mergeSessionSettings } from './session-settings.ts';
import { checkExecType } from './sql-planner.ts';

/** Statements that answer rows: in a script, only the last may be one. */
const ROW_KINDS = new Set(['Select', 'Union', 'Show', 'ShowCreate', 'Describe', 'Explain']);

/** Statements a `read_only` user may run (as SqlQueryPlanner checks per statement). */
const READ_ONLY_KINDS = new Set([...ROW_KINDS, 'Set']);

/**
 * Plan a script of `;`-separated statements (docs/sql-reference.md): every statement but the last
 * runs now, in order; the last one's plan is answered for the caller to run (its rows, or 204).
 * Checked before anything runs: the script parses, only the last statement answers rows, and a
 * `read_only` user runs only statements it may, and every statement fits `/exec`'s `type`. A statement that fails stops the script; the ones
 * before it stay done. A `SET` applies to the statements after it in the script (the request is
 * the session: the next request starts without it). A single statement is planned as is.
 */
export async function planScript(
  planner: QueryPlanner,
  sql: string,
  options: PlanOptions,
  signal: AbortSignal,
): Promise<Plan> {
  let script: ReturnType<typeof parseScript>;
  try {
    script = parseScript(sql);
  } catch (e) {
    throw isSqlSyntaxError(e) ? syntaxErrorToTributary(e) : e;
  }
  if (script.length <= 1) return planner.plan(sql, options);
  script.forEach(({ statement }, i) => {
    if (i < script.length - 1 && ROW_KINDS.has(statement.kind)) {
      throw err('INVALID_FIELD', {
        field: 'sql',
        detail: `statement ${i + 1} of ${script.length} (${statement.kind}) answers rows; in a script of several statements only the last may`,
      });
    }
    // `/exec`'s type holds for every statement of a script, checked before any runs.
    if (options.execType) checkExecType(statement.kind, options.execType);
    if (options.user.role === 'read_only' && !READ_ONLY_KINDS.has(statement.kind)) {
      throw err('FORBIDDEN_READ_ONLY', {
        user: options.user.username,
        action: `run ${statement.kind} statements`,
      });
    }
  });
  let session = options;
  for (const { statement, text } of script.slice(0, -1)) {
    const plan = await planner.plan(text, session);
    if (plan.kind !== 'statement') throw new Error(`a ${plan.kind} plan where a statement was checked`);
    await plan.run(signal);
    if (statement.kind === 'Set') {
      session = { ...session, settings: mergeSessionSettings(session.settings ?? [], statement.settings) };
    }
  }
  return planner.plan(script[script.length - 1]!.text, session);
}
