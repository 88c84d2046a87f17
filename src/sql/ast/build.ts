import type { Expr, FunctionCall, Identifier } from './expression.ts';
import { NO_SPAN } from './span.ts';
import type { ShowStatement } from './statement.ts';

/** Builders for AST nodes made by code (rewrites, planners); they carry no source span. */
export const ident = (...parts: string[]): Identifier => ({ kind: 'Identifier', parts, span: NO_SPAN });
export const num = (text: string | number): Expr => ({ kind: 'Number', text: String(text), span: NO_SPAN });
export const str = (value: string): Expr => ({ kind: 'String', value, span: NO_SPAN });
export const call = (name: string, ...args: Expr[]): FunctionCall => ({
  kind: 'Function',
  name,
  args,
  distinct: false,
  span: NO_SPAN,
});
export const alias = (expr: Expr, name: string): Expr => ({
  kind: 'Alias',
  expr,
  alias: name,
  span: NO_SPAN,
});

/** The name filter of a SHOW statement: `LIKE` / `ILIKE` / `NOT LIKE` (`%` any run, `_` one character). */
export function showNameFilter(
  s: Pick<ShowStatement, 'like' | 'ilike' | 'notLike'>,
): (name: string) => boolean {
  if (s.like === undefined) return () => true;
  const re = new RegExp(
    `^${[...s.like].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`,
    s.ilike ? 'is' : 's',
  );
  const not = s.notLike ?? false;
  return (name) => re.test(name) !== not;
}
