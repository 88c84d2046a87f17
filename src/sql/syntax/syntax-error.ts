import { err, type TributaryError } from '../../errors/tributary-error.ts';
import { lineColumn } from '../ast/span.ts';

/**
 * A parse error with its position. `detail` says what was expected and what was found;
 * `message` adds the position: "Expected one of: FROM, WHERE but found 'x' at line 2, column 7".
 */
export class SqlSyntaxError extends Error {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  readonly detail: string;
  readonly expected: readonly string[];
  readonly found: string;

  constructor(source: string, offset: number, detail: string, expected: readonly string[] = [], found = '') {
    const { line, column } = lineColumn(source, offset);
    super(`${detail} at line ${line}, column ${column}`);
    this.name = 'SqlSyntaxError';
    this.offset = offset;
    this.line = line;
    this.column = column;
    this.detail = detail;
    this.expected = expected;
    this.found = found;
  }
}

export function isSqlSyntaxError(e: unknown): e is SqlSyntaxError {
  return e instanceof SqlSyntaxError;
}

/** The catalogue error SQL_SYNTAX_ERROR (code 62) for a parse error, for the API boundary. */
export function syntaxErrorToTributary(e: SqlSyntaxError): TributaryError {
  return err('SQL_SYNTAX_ERROR', { line: e.line, column: e.column, detail: e.detail, offset: e.offset }, e);
}
