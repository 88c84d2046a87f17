import { err } from '../../errors/tributary-error.ts';
import type { Expr } from '../ast/expression.ts';
import type { FromItem, JoinExpr, Query } from '../ast/query.ts';
import { type AnyNode, walk } from '../ast/walk.ts';
import { printExpression } from '../printer/format.ts';
import type { TableResolver } from '../translator/resolver.ts';
import { conjuncts } from './query-facts.ts';

/**
 * Proton's hash join takes equalities between its two sides (and, in an ASOF join, one
 * inequality); a comparison `<`, `>`, `<=`, `>=` between a column of each side in the ON of any
 * other join is refused with INVALID_JOIN_ON_EXPRESSION (403), as Proton answers it
 * (0009_stream_join_stream_case1 id 30: `table(l) JOIN table(r) ON i = ii AND ts < tts`), where the
 * engine would run it. Sides are known by their aliases and, for streams and `table(s)`, by their
 * columns; a comparison whose sides cannot be told is left to the engine.
 */
export function checkJoinOnInequalities(query: Query, resolver: TableResolver): void {
  walk(query as AnyNode, (n) => {
    if (n.kind !== 'Join') return undefined;
    const j = n as unknown as JoinExpr;
    if (!j.on || j.strictness === 'ASOF' || j.joinKind === 'CROSS' || j.joinKind === 'COMMA')
      return undefined;
    const left = sideOf(j.left, resolver);
    const right = sideOf(j.right, resolver);
    for (const c of conjuncts(j.on)) {
      if (c.kind !== 'Binary' || !['<', '>', '<=', '>='].includes(c.op)) continue;
      const a = readsSide(c.left, left, right);
      const b = readsSide(c.right, left, right);
      if ((a === 'left' && b === 'right') || (a === 'right' && b === 'left'))
        throw err('INVALID_JOIN_ON_EXPRESSION', {
          detail: `Unsupported JOIN ON condition ${printExpression(c)}: a join compares its two sides with equalities only (an ASOF JOIN takes one inequality); move the comparison to WHERE, or use ASOF JOIN`,
        });
    }
    return undefined;
  });
}

interface Side {
  /** The names a column of this side may be qualified by. */
  readonly aliases: Set<string>;
  /** Its columns, when every item of it is known. */
  columns: Set<string> | undefined;
}

function sideOf(item: FromItem, resolver: TableResolver): Side {
  const side: Side = { aliases: new Set(), columns: new Set() };
  const add = (alias: string | undefined, columns: readonly string[] | undefined) => {
    if (alias) side.aliases.add(alias);
    if (!columns) side.columns = undefined;
    else for (const c of columns) side.columns?.add(c);
  };
  const resolved = (db: string | undefined, name: string) =>
    resolver.resolve(db, name)?.columns?.map((c) => c.name);
  const visit = (f: FromItem) => {
    if (f.kind === 'Join') {
      visit(f.left);
      visit(f.right);
    } else if (f.kind === 'Table') {
      add(f.alias ?? f.name, resolved(f.database, f.name));
    } else if (f.kind === 'TableFunction') {
      const arg = f.args[0];
      const named =
        f.name.toLowerCase() === 'table' && arg?.kind === 'Identifier' && arg.parts.length <= 2
          ? arg.parts
          : undefined;
      const name = named?.at(-1);
      add(
        f.alias ?? name,
        name ? resolved(named && named.length === 2 ? named[0] : undefined, name) : undefined,
      );
    } else if (f.kind === 'SubqueryTable') {
      add(f.alias, undefined);
    } else {
      visit(f.left);
      side.columns = undefined;
    }
  };
  visit(item);
  return side;
}

/** Which side an expression's columns all belong to; undefined when none, both, or not known. */
function readsSide(e: Expr, left: Side, right: Side): 'left' | 'right' | undefined {
  const seen = new Set<'left' | 'right' | 'unknown'>();
  walk(e as AnyNode, (n) => {
    if (n.kind !== 'Identifier') return undefined;
    const parts = (n as unknown as { parts: readonly string[] }).parts;
    if (parts.length >= 2) {
      const q = parts[parts.length - 2] as string;
      const l = left.aliases.has(q);
      const r = right.aliases.has(q);
      seen.add(l && !r ? 'left' : r && !l ? 'right' : 'unknown');
      return undefined;
    }
    const name = parts[0] as string;
    const l = left.columns?.has(name);
    const r = right.columns?.has(name);
    seen.add(l && r === false ? 'left' : r && l === false ? 'right' : 'unknown');
    return undefined;
  });
  if (seen.size !== 1 || seen.has('unknown')) return undefined;
  return seen.has('left') ? 'left' : 'right';
}
