import type { Expr } from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import type { Statement } from '../ast/statement.ts';
import { describeToken } from '../syntax/tokens.ts';
import type { DataType } from '../types/data-type.ts';
import { StatementParser } from './parser-statement.ts';

/** Require the end of the text (an optional `;` allowed), or fail listing what could follow. */
function finish(p: StatementParser, allowSemicolon: boolean): void {
  if (allowSemicolon && p.acceptOp(';')) {
    while (p.acceptOp(';'));
    if (!p.atEnd())
      p.fail(`Expected end of query (one statement only) but found ${describeToken(p.token, p.source)}`);
  }
  if (!p.atEnd()) {
    p.expect('end of query');
    p.fail();
  }
}

/**
 * Parse one statement. A trailing `;` is allowed; anything after it is an error.
 * Throws SqlSyntaxError (with offset, line, column and what was expected).
 */
export function parseStatement(sql: string): Statement {
  const p = new StatementParser(sql);
  if (p.atEnd()) {
    p.expect('statement');
    p.fail('Empty query');
  }
  const statement = p.statement();
  finish(p, true);
  return statement;
}

/** Parse a script of statements separated by `;`. */
export function parseStatements(sql: string): Statement[] {
  return parseScript(sql).map((s) => s.statement);
}

/** One statement of a script and its own text (without the `;`). */
export interface ScriptStatement {
  statement: Statement;
  text: string;
}

/** Parse a script of statements separated by `;`, keeping each statement's text. */
export function parseScript(sql: string): ScriptStatement[] {
  const p = new StatementParser(sql);
  const out: ScriptStatement[] = [];
  for (;;) {
    while (p.acceptOp(';'));
    if (p.atEnd()) return out;
    const start = p.token.start;
    const statement = p.statement();
    out.push({ statement, text: sql.slice(start, p.previous.end) });
    if (!p.atEnd() && !p.isOp(';')) {
      p.expect('end of query');
      p.fail();
    }
  }
}

/** Parse a query (SELECT or UNION); other statements are a syntax error. */
export function parseQuery(sql: string): Query {
  const p = new StatementParser(sql);
  const q = p.query();
  finish(p, true);
  return q;
}

/** Parse a single expression (optionally with an alias). */
export function parseExpression(sql: string): Expr {
  const p = new StatementParser(sql);
  const e = p.expressionWithAlias();
  finish(p, false);
  return e;
}

/** Parse a data type as written in SQL (`nullable(int32)`), with SQL positions in errors. */
export function parseType(sql: string): DataType {
  const p = new StatementParser(sql);
  const t = p.dataType();
  finish(p, false);
  return t;
}
