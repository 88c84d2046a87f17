import { err, isTributaryError } from '../../errors/tributary-error.ts';
import { parseExpression, translateExpression } from '../../sql/index.ts';
import { isSqlSyntaxError } from '../../sql/syntax/syntax-error.ts';
import type { SqlExpr } from '../../stream/stream-definition.ts';

/**
 * A SQL fragment of a REST body (a column's `default`, a `ttl_expression`, `primary_key`, ...)
 * translated here, at the boundary, so a fragment that does not parse answers FIELD_SYNTAX_ERROR
 * naming the field (`columns[2].default`) and the position in it, before anything is created.
 */
export function fieldExpr(field: string, text: string): SqlExpr {
  const proton = text.trim();
  return { proton, engine: guarded(field, () => translateExpression(proton)) };
}

/**
 * Check that a fragment which is not an expression of its own (a codec list `ZSTD(1), LZ4`, a
 * skipping index type `bloom_filter(0.01)`) reads as the arguments of a call: the engine would
 * otherwise answer a syntax error at a position in SQL the client never wrote.
 */
export function checkFieldArguments(field: string, text: string): void {
  const wrapped = `f(${text})`;
  guarded(field, () => {
    try {
      parseExpression(wrapped);
    } catch (e) {
      // Positions are those of `text`: shift past the `f(` added in front.
      if (isSqlSyntaxError(e)) {
        throw err('FIELD_SYNTAX_ERROR', {
          field,
          line: e.line,
          column: e.line === 1 ? Math.max(1, e.column - 2) : e.column,
          detail: e.detail,
        });
      }
      throw e;
    }
  });
}

function guarded<T>(field: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (isTributaryError(e) && e.errorName === 'SQL_SYNTAX_ERROR') {
      const { line, column, detail } = e.params;
      throw err('FIELD_SYNTAX_ERROR', { field, line, column, detail });
    }
    if (isTributaryError(e)) throw e;
    if (isSqlSyntaxError(e)) {
      throw err('FIELD_SYNTAX_ERROR', { field, line: e.line, column: e.column, detail: e.detail });
    }
    if (e instanceof RangeError) throw err('INVALID_FIELD', { field, detail: 'nests too deeply' });
    throw e;
  }
}
