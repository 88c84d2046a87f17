import type { Expr } from '../sql/ast/expression.ts';
import type { CteItem, Query, TableFunctionRef, TableRef } from '../sql/ast/query.ts';
import { type AnyNode, transform, walk } from '../sql/ast/walk.ts';

/** A name a query reads from: a stream, a view, a materialized view or an engine table. */
export interface TableReference {
  readonly database?: string;
  readonly name: string;
}

/** Table functions whose first argument names a stream (or a view, or nests one of these). */
const STREAM_TABLE_FUNCTIONS = new Set(['table', 'tumble', 'hop', 'session', 'dedup', 'changelog']);

function cteNames(query: Query): Set<string> {
  const names = new Set<string>();
  walk(query, (n) => {
    if (n.kind === 'Cte') names.add((n as CteItem).name);
  });
  return names;
}

/** The identifier a stream table function reads, unwrapping `tumble(table(s), ...)`. */
function sourceIdentifier(args: readonly Expr[]): { parts: readonly string[] } | undefined {
  let arg = args[0];
  while (arg?.kind === 'Function' && STREAM_TABLE_FUNCTIONS.has(arg.name.toLowerCase())) arg = arg.args[0];
  return arg?.kind === 'Identifier' && arg.parts.length <= 2 ? arg : undefined;
}

function referenceOf(parts: readonly string[]): TableReference {
  return parts.length === 2
    ? { database: parts[0] as string, name: parts[1] as string }
    : { name: parts[0] as string };
}

/**
 * Every name a query reads at any depth: FROM items, JOIN sides, subqueries in expressions and
 * the stream argument of `table()`, `tumble()`, `hop()`, `session()`, `dedup()`, `changelog()`.
 * Names of CTEs (at any level) are left out. Duplicates are removed; the order is of first use.
 */
export function tableReferences(query: Query): TableReference[] {
  const ctes = cteNames(query);
  const out: TableReference[] = [];
  const seen = new Set<string>();
  const add = (ref: TableReference) => {
    if (ref.database === undefined && ctes.has(ref.name)) return;
    const key = `${ref.database ?? ''}\u0000${ref.name}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(ref);
  };
  walk(query, (n) => {
    if (n.kind === 'Table') {
      const t = n as TableRef;
      add(t.database !== undefined ? { database: t.database, name: t.name } : { name: t.name });
    } else if (n.kind === 'TableFunction') {
      const f = n as TableFunctionRef;
      const id = STREAM_TABLE_FUNCTIONS.has(f.name.toLowerCase()) ? sourceIdentifier(f.args) : undefined;
      if (id) add(referenceOf(id.parts));
    }
  });
  return out;
}

/**
 * The query with every unqualified name it reads (see `tableReferences`) qualified with
 * `database`, so a view defined in one database reads that database's streams wherever it is used.
 */
export function qualifyReferences(query: Query, database: string): Query {
  const ctes = cteNames(query);
  const qualifyArg = (args: readonly Expr[]): readonly Expr[] => {
    const first = args[0];
    if (first === undefined) return args;
    if (first.kind === 'Identifier' && first.parts.length === 1 && !ctes.has(first.parts[0] as string)) {
      return [{ ...first, parts: [database, first.parts[0] as string] }, ...args.slice(1)];
    }
    if (first.kind === 'Function' && STREAM_TABLE_FUNCTIONS.has(first.name.toLowerCase())) {
      return [{ ...first, args: qualifyArg(first.args) }, ...args.slice(1)];
    }
    return args;
  };
  return transform(query, (n: AnyNode): AnyNode => {
    if (n.kind === 'Table') {
      const t = n as TableRef;
      if (t.database !== undefined || ctes.has(t.name)) return n;
      const qualified: TableRef = { ...t, database };
      return qualified;
    }
    if (n.kind === 'TableFunction') {
      const f = n as TableFunctionRef;
      if (!STREAM_TABLE_FUNCTIONS.has(f.name.toLowerCase())) return n;
      const args = qualifyArg(f.args);
      if (args === f.args) return n;
      const qualified: TableFunctionRef = { ...f, args };
      return qualified;
    }
    return n;
  });
}
