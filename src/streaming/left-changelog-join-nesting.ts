import { isAggregation, referencedColumns } from '../sql/analyzer/query-facts.ts';
import { alias, ident } from '../sql/ast/build.ts';
import type { Expr, Identifier } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, SelectQuery, TableFunctionRef } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace } from '../sql/ast/walk.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';
import { splitWindowArgs, type WindowArgs } from '../sql/translator/window-sources.ts';

const NESTED = '__trb_left_join';
const WINDOWS = ['tumble', 'hop'];

/**
 * An aggregation written directly over a LEFT JOIN of changelog inputs (versioned_kv, changelog_kv,
 * changelog streams, `changelog(...)`), also in a chain with INNER joins and `table(dim)` sides:
 * `SELECT k, count(), sum(x) FROM a LEFT JOIN b ON ... WHERE ... GROUP BY k` becomes
 * `SELECT k, count(), sum(x) FROM (SELECT k, x FROM a LEFT JOIN b ON ... WHERE ...) GROUP BY k`,
 * whose subquery then runs as its own query and the aggregation retracts its rows
 * (nested-changelog-join.ts). A window over the first side (`tumble(a, t, 5s) AS a LEFT JOIN b`)
 * becomes a window over the subquery (`tumble((SELECT t, ... FROM a LEFT JOIN b ...), t, 5s)`).
 *
 * The subquery selects each column the aggregation names: `x` as `x`, `a.x` as `x` unless another
 * named column also ends in `x` or it is a `_tp_` column (then `__trb_a_x`, shown as `x` in the
 * select list). Names of the
 * select list's aliases and the window's `window_start` / `window_end` are the outer query's own.
 * `isChangelogInput` answers whether a named stream is a changelog input (false for append
 * streams, undefined for anything else); any other FROM leaves the query as it is.
 */
export function nestLeftChangelogJoin(
  select: SelectQuery,
  isChangelogInput: (db: string | undefined, name: string) => boolean | undefined,
): SelectQuery {
  const top = select.from;
  if (!isAggregation(select) || top?.kind !== 'Join') return select;
  const spine: JoinExpr[] = [];
  let first: FromItem = top;
  for (; first.kind === 'Join'; first = first.left) spine.push(first);
  const ctes = new Set(select.with?.flatMap((w) => (w.kind === 'Cte' ? [w.name] : [])) ?? []);
  const bounded = (f: FromItem) => f.kind === 'TableFunction' && f.name.toLowerCase() === 'table';
  const window =
    first.kind === 'TableFunction' && WINDOWS.includes(first.name.toLowerCase()) ? first : undefined;
  const firstStream = window ? windowedStream(window) : first;
  if (!firstStream) return select;
  const changelogInput = (f: FromItem): boolean => {
    if (f.kind === 'TableFunction') return f.name.toLowerCase() === 'changelog';
    if (f.kind !== 'Table' || (f.database === undefined && ctes.has(f.name))) return false;
    return isChangelogInput(f.database, f.name) === true;
  };
  const rights = spine.map((j) => j.right);
  if (!changelogInput(firstStream) || !rights.every((f) => bounded(f) || changelogInput(f))) return select;
  if (!spine.some((j) => j.joinKind === 'LEFT' && !bounded(j.right))) return select;

  // A select-list alias names the outer query's column, unless its own expression reads a column
  // of that name (`sum(x) AS x`).
  const outerNames = new Set(
    select.columns.flatMap((c) =>
      c.kind === 'Alias' && !referencedColumns(c.expr).some((id) => id.parts.at(-1) === c.alias)
        ? [c.alias]
        : [],
    ),
  );
  if (window) for (const n of ['window_start', 'window_end']) outerNames.add(n);
  const windowAlias = window ? (window.alias ?? (firstStream as { name: string }).name) : undefined;
  // The window's time column: its second argument, or the windowed side's `_tp_time`.
  const split = window
    ? splitWindowArgs(window.name.toLowerCase(), window.args, window.name.toLowerCase() === 'hop' ? 2 : 1)
    : undefined;
  const timeArg: Expr | undefined = split
    ? (split.timeColumn ?? ident(windowAlias as string, '_tp_time'))
    : undefined;

  const { from: _from, where, with: withItems, emit, settings, format, ...levels } = select;
  const named: Identifier[] = [
    ...referencedColumns({ ...levels, kind: 'Select' } as SelectQuery),
    ...(timeArg ? referencedColumns(timeArg) : []),
  ].filter((id) => !(id.parts.length === 1 && outerNames.has(id.parts[0] as string)));
  const keys = [...new Map(named.map((id) => [id.parts.join('.'), id.parts])).values()];
  const lastParts = keys.map((p) => p.at(-1) as string);
  const names = new Map<string, string>();
  for (const parts of keys) {
    const last = parts.at(-1) as string;
    // `_tp_time` and the other `_tp_` columns are the subquery's own: the join's gets another name.
    const unique = lastParts.filter((l) => l === last).length === 1 && !last.startsWith('_tp_');
    names.set(parts.join('.'), unique ? last : `__trb_${parts.join('_')}`);
  }
  const projection: Expr[] = keys.map((parts) => {
    const name = names.get(parts.join('.')) as string;
    return parts.length === 1 && parts[0] === name ? ident(name) : alias(ident(...parts), name);
  });
  if (projection.length === 0)
    projection.push(alias(ident(windowAlias ?? aliasOf(firstStream), '_tp_time'), '_tp_time'));
  const rename = <T extends AnyNode>(node: T): T =>
    replace(node, (n) => {
      if (n.kind !== 'Identifier') return undefined;
      const id = n as unknown as Identifier;
      if (id.parts.length === 1 && outerNames.has(id.parts[0] as string)) return undefined;
      const to = names.get(id.parts.join('.'));
      return to === undefined ? undefined : (ident(to) as unknown as AnyNode);
    });

  const joined: FromItem = window ? replaceFirst(top, firstStream, window.alias) : top;
  const inner: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: projection,
    from: joined,
    ...(where ? { where } : {}),
    ...(withItems ? { with: withItems } : {}),
    span: NO_SPAN,
  };
  const subquery: Expr = { kind: 'Subquery', query: inner, span: NO_SPAN } as Expr;
  const from: FromItem = window
    ? {
        ...window,
        args: [
          subquery,
          rename(timeArg as AnyNode) as Expr,
          ...(split as WindowArgs).intervals,
          ...(split as WindowArgs).rest,
        ],
      }
    : { kind: 'SubqueryTable', query: inner, alias: NESTED, span: NO_SPAN };
  // An unaliased column keeps its name: `a.x` is `x`, `sum(b.y)` is `sum(b.y)`.
  const columns = select.columns.map((c) => {
    const renamed = rename(c as AnyNode) as Expr;
    if (renamed === c || c.kind === 'Alias' || c.kind === 'Asterisk') return renamed;
    if (c.kind !== 'Identifier' || renamed.kind !== 'Identifier') return alias(renamed, protonColumnName(c));
    const last = c.parts.at(-1) as string;
    return renamed.parts[0] === last ? renamed : alias(renamed, last);
  });
  const outer = rename(levels as unknown as AnyNode) as unknown as typeof levels;
  return {
    ...outer,
    kind: 'Select',
    columns,
    from,
    ...(emit ? { emit } : {}),
    ...(settings ? { settings } : {}),
    ...(format ? { format } : {}),
  };
}

/** The stream a window function reads, as a FROM item named by the window's alias. */
function windowedStream(w: TableFunctionRef): FromItem | undefined {
  const arg = w.args[0];
  if (arg?.kind === 'Identifier' && arg.parts.length <= 2) {
    const [database, name] =
      arg.parts.length === 2 ? [arg.parts[0], arg.parts[1] as string] : [undefined, arg.parts[0] as string];
    return { kind: 'Table', ...(database ? { database } : {}), name, span: arg.span };
  }
  if (arg?.kind === 'Function' && arg.name.toLowerCase() === 'changelog')
    return { kind: 'TableFunction', name: arg.name, args: arg.args, span: arg.span };
  return undefined;
}

function aliasOf(f: FromItem): string {
  if (f.kind === 'Table') return f.alias ?? f.name;
  return (f as { alias?: string }).alias ?? '';
}

/** The join chain with its first item (a window) replaced by the stream it reads, under `name`. */
function replaceFirst(j: FromItem, stream: FromItem, name: string | undefined): FromItem {
  if (j.kind !== 'Join') return name ? ({ ...stream, alias: name } as FromItem) : stream;
  return { ...j, left: replaceFirst(j.left, stream, name) };
}
