import type { StatementHandler } from '../../queries/statement-handler.ts';
import type { DropStatement } from '../../sql/ast/statement.ts';
import type { InputService } from './input-service.ts';

/**
 * Wrap the DROP STREAM|TABLE handler: a stream an input writes into cannot be dropped
 * (RESOURCE_IN_USE naming the inputs; DROP INPUT first). Checked when the statement is planned.
 */
export function guardStreamDrop(
  drop: StatementHandler<DropStatement>,
  inputs: InputService,
  defaultDatabase: string,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    inputs.assertNoWriters(s.target.database ?? defaultDatabase, s.target.name);
    return drop(s, ctx);
  };
}

/** Wrap the DROP DATABASE handler: refused while an input writes into one of its streams. */
export function guardDatabaseDrop(
  drop: StatementHandler<DropStatement>,
  inputs: InputService,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    for (const w of inputs.writersIn(s.target.name)) {
      const record = inputs.definition(w);
      if (record) {
        const t = inputs.targetOf(record.value);
        inputs.assertNoWriters(t.db, t.name);
      }
    }
    return drop(s, ctx);
  };
}
