import assert from 'node:assert/strict';
import { sameTree, withoutSpans } from '../../src/sql/ast/compare.ts';
import type { Expr } from '../../src/sql/ast/expression.ts';
import type { Statement } from '../../src/sql/ast/statement.ts';
import { parseExpression, parseStatement } from '../../src/sql/parser/parse.ts';
import { print, printExpression } from '../../src/sql/printer/format.ts';

/** Parse an expression and drop spans, for deepEqual against a literal tree. */
export function expr(text: string): Expr {
  return withoutSpans(parseExpression(text));
}

/** Parse a statement and drop spans. */
export function stmt(text: string): Statement {
  return withoutSpans(parseStatement(text));
}

/** Parse, print (both layouts), parse again: the tree must not change. Returns the one-line text. */
export function roundTrip(text: string): string {
  const ast = parseStatement(text);
  for (const pretty of [true, false]) {
    const printed = print(ast, { pretty });
    const again = parseStatement(printed);
    assert.ok(sameTree(ast, again), `round trip changed the tree:\n${text}\n=> ${printed}`);
  }
  return print(ast, { pretty: false });
}

/** The canonical one-line form of an expression. */
export function canon(text: string): string {
  return printExpression(parseExpression(text));
}

/** Shorthand node builders for expected trees (spans omitted). */
export const id = (...parts: string[]) => ({ kind: 'Identifier', parts }) as const;
export const num = (text: string) => ({ kind: 'Number', text }) as const;
export const str = (value: string) => ({ kind: 'String', value }) as const;
export const bin = (op: string, left: unknown, right: unknown) => ({ kind: 'Binary', op, left, right });
export const call = (name: string, ...args: unknown[]) => ({ kind: 'Function', name, args, distinct: false });
