import { err } from '../errors/tributary-error.ts';
import { parseScript } from '../sql/parser/parse.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../sql/syntax/syntax-error.ts';
import type { Plan, PlanOptions, QueryPlanner } from './execution.ts';
import { checkExecType } from './sql-planner.ts';

/** Statements that answer rows: in a script, only the last may be one. */
const ROW_KINDS = new Set(['Select', 'Union', 'Show', 'ShowCreate', 'Describe', 'Explain']);

/** Statements a `read_only` user may run (as SqlQueryPlanner checks per statement). */
const READ_ONLY_KINDS = ROW_KINDS;

/**
 * Plan a script of `;`-separated statements (docs/sql-reference.md): every statement but the last
 * runs now, in order; the last one's plan is answered for the caller to run (its rows, or 204).
 * Checked before anything runs: the script parses, only the last statement answers rows, and a
 * `read_only` user runs only statements it may, and every statement fits `/exec`'s `type`. A statement that fails stops the script; the ones
 * before it stay done. A single statement is planned as is.
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
  for (const { text } of script.slice(0, -1)) {
    const plan = await planner.plan(text, options);
    if (plan.kind !== 'statement') throw new Error(`a ${plan.kind} plan where a statement was checked`);
    await plan.run(signal);
  }
  return planner.plan(script[script.length - 1]!.text, options);
}
