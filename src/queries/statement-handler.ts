import type { Statement } from '../sql/ast/statement.ts';
import type { Plan, PlanOptions } from './execution.ts';

/** What a statement handler gets besides the statement: the request's options and the SQL text. */
export interface StatementContext {
  readonly options: PlanOptions;
  /** The statement's SQL as the client sent it. */
  readonly sql: string;
}

/**
 * Turns one kind of statement into a plan. Handlers are registered with the planner by the
 * folders that own the resources (streams, views, inputs, ...), so the planner itself knows none.
 */
export type StatementHandler<S extends Statement = Statement> = (
  statement: S,
  context: StatementContext,
) => Promise<Plan>;
