import type { Expr } from '../ast/expression.ts';
import type { Statement } from '../ast/statement.ts';
import { parseStatements } from '../parser/parse.ts';
import { PREC } from './print-expression.ts';
import { StatementPrinter } from './print-statement.ts';
import { Layout } from './sql-text.ts';

export interface PrintOptions {
  /** Multi-line layout with indented clause bodies (default true). */
  readonly pretty?: boolean;
}

const printer = new StatementPrinter();

/**
 * Canonical SQL for a statement. Keywords are upper case; function names, identifiers and type
 * names are kept as written (identifiers are back-quoted only when they must be); the interval
 * shorthand (`5s`) stays shorthand. `parseStatement(print(ast))` equals `ast` (ignoring spans).
 */
export function print(statement: Statement, options: PrintOptions = {}): string {
  return printer.statement(statement, new Layout(options.pretty ?? true));
}

/** An expression on one line (used for column names and messages). */
export function printExpression(expr: Expr): string {
  return printer.expr(expr, PREC.alias, new Layout(false));
}

/** Format SQL text (one or more statements) canonically; statements are separated by `;` lines. */
export function formatSql(text: string, options: PrintOptions = {}): string {
  const statements = parseStatements(text);
  return statements.map((s) => print(s, options)).join(';\n\n');
}
