import { err } from '../errors/tributary-error.ts';
import type { Statement } from '../sql/ast/statement.ts';
import { parseStatement } from '../sql/parser/parse.ts';
import { isSqlSyntaxError, syntaxErrorToTributary } from '../sql/syntax/syntax-error.ts';
import type { Plan, PlanOptions, QueryPlanner } from './execution.ts';
import type { StatementHandler } from './statement-handler.ts';

/** Statements a `read_only` user may run. */
const READ_ONLY_KINDS = new Set(['Select', 'Union', 'Show', 'ShowCreate', 'Describe', 'Explain']);

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

  async plan(sql: string, options: PlanOptions): Promise<Plan> {
    let statement: Statement;
    try {
      statement = parseStatement(sql);
    } catch (e) {
      throw isSqlSyntaxError(e) ? syntaxErrorToTributary(e) : e;
    }
    if (options.user.role === 'read_only' && !READ_ONLY_KINDS.has(statement.kind)) {
      throw err('FORBIDDEN_READ_ONLY', {
        user: options.user.username,
        action: `run ${statement.kind} statements`,
      });
    }
    const handler = this.handlers.get(statement.kind);
    if (!handler) {
      throw err('NOT_IMPLEMENTED', { detail: `${statement.kind} statements are not supported` });
    }
    return handler(statement, { options, sql });
  }
}
