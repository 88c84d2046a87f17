import { err } from '../errors/tributary-error.ts';
import type { Statement } from '../sql/ast/statement.ts';
import { parseStatement } from '../sql/parser/parse.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../sql/syntax/syntax-error.ts';
import { guardDepth } from '../sql/syntax/too-deep.ts';
import type { Plan, PlanOptions, QueryPlanner } from './execution.ts';
import { applySessionSettings, checkSessionSettings } from './session-settings.ts';
import type { StatementHandler } from './statement-handler.ts';
import { statementPlan } from './static-rows.ts';

/** Statements that only read (what a `read_only` user may run, and `/exec` type `historical` accepts). */
const READ_ONLY_KINDS: ReadonlySet<string> = new Set([
  'Select',
  'Union',
  'Show',
  'ShowCreate',
  'Describe',
  'Explain',
  'Set',
]);

/**
 * `/exec` enforces its `type`: `historical` runs only statements that read (SELECT, SHOW,
 * DESCRIBE, EXPLAIN), `ddl` only statements that change something (DDL, INSERT, KILL, ...).
 */
export function checkExecType(kind: Statement['kind'], type: 'historical' | 'ddl'): void {
  // SET changes nothing but the statements after it in the same script: fine in either type
  if (kind === 'Set') return;
  const reads = READ_ONLY_KINDS.has(kind);
  if (type === 'historical' && !reads) {
    throw err('WRONG_QUERY_TYPE', {
      detail: `type "historical" runs only SELECT, SHOW, DESCRIBE and EXPLAIN; this is a ${kind} statement: send it with type "ddl"`,
    });
  }
  if (type === 'ddl' && reads) {
    throw err('WRONG_QUERY_TYPE', {
      detail: `type "ddl" runs statements that change something and answers 204; this ${kind} statement returns rows: send it with type "historical"`,
    });
  }
}

/**
 * The Proton-dialect planner: parses the SQL and hands the statement to the handler registered for
 * its kind (SELECT, stream DDL, INSERT, SHOW, views, inputs, ...).
 */
export class SqlQueryPlanner implements QueryPlanner {
  private readonly handlers = new Map<string, StatementHandler>();

  register<K extends Statement['kind']>(
    kind: K,
    handler: StatementHandler<Extract<Statement, { kind: K }>>,
  ): this {
    this.handlers.set(kind, handler as StatementHandler);
    return this;
  }

  plan(sql: string, options: PlanOptions): Promise<Plan> {
    return guardDepth(() => this.planStatement(sql, options));
  }

  private async planStatement(sql: string, options: PlanOptions): Promise<Plan> {
    let statement: Statement;
    try {
      statement = parseStatement(sql);
    } catch (e) {
      throw isSqlSyntaxError(e) ? syntaxErrorToTributary(e) : e;
    }
    if (options.execType) checkExecType(statement.kind, options.execType);
    if (options.user.role === 'read_only' && !READ_ONLY_KINDS.has(statement.kind)) {
      throw err('FORBIDDEN_READ_ONLY', {
        user: options.user.username,
        action: `run ${statement.kind} statements`,
      });
    }
    // SET only checks its settings here; planScript hands them to the statements after it
    if (statement.kind === 'Set') {
      checkSessionSettings(statement.settings);
      return statementPlan(sql, 'set', async () => {});
    }
    statement = applySessionSettings(statement, options.settings);
    const handler = this.handlers.get(statement.kind);
    if (!handler) {
      throw err('NOT_IMPLEMENTED', { detail: `${statement.kind} statements are not supported` });
    }
    return handler(statement, { options, sql });
  }
}
