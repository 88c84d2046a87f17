import type { Expr, Identifier } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, SelectQuery, TableFunctionRef } from '../sql/ast/query.ts';
import { NO_SPAN } from '../sql/ast/span.ts';
import { type AnyNode, replace, walk } from '../sql/ast/walk.ts';
import { protonColumnName } from '../sql/translator/column-names.ts';
import { splitWindowArgs } from '../sql/translator/window-sources.ts';

/** Is `db.name` a stream whose rows are a changelog (versioned_kv, changelog_kv, changelog)? */
export type IsChangelogStream = (db: string | undefined, name: string) => boolean;

const WINDOW_COLUMNS = new Set(['window_start', 'window_end']);

/**
 * `session(l, t, 5s) AS a JOIN r AS b ON ...` where `l` is a changelog input: Proton assigns sessions
 * to the rows that reach the aggregation, i.e. the join's rows with their `_tp_delta`
 * (SessionAggregatingTransform runs after the join; SessionHelper reads no delta). Tributary runs
 * the join as a subquery of its own, the session window over it (stream-bindings.ts): `session((SELECT
 * a.t AS __sj0, b.j AS __sj1, ... FROM l AS a JOIN r AS b ON ...), __sj0, 5s)`, every column the
 * outer query and the session's arguments name selected once, and the outer query's names replaced
 * (its items keep their column names). Other FROMs are answered unchanged.
 */
export function nestSessionJoin(select: SelectQuery, isChangelogStream: IsChangelogStream): SelectQuery {
  const from = select.from;
  if (from?.kind !== 'Join') return select;
  let first: FromItem = from;
  while (first.kind === 'Join') first = first.left;
  if (first.kind !== 'TableFunction' || first.name.toLowerCase() !== 'session') return select;
  const w = first;
  const source = w.args[0];
  if (source?.kind !== 'Identifier' || source.parts.length > 2) return select;
  const [db, name] =
    source.parts.length === 2
      ? [source.parts[0], source.parts[1] as string]
      : [undefined, source.parts[0] as string];
  if (!isChangelogStream(db, name)) return select;
  const windowAlias = w.alias ?? name;

  // Names that are not columns of the join: the items' aliases, lambda parameters, window bounds.
  const aliases = new Set(select.columns.flatMap((c) => (c.kind === 'Alias' ? [c.alias] : [])));
  const params = new Set<string>();
  walk(select as unknown as AnyNode, (n) => {
    if (n.kind === 'Lambda') for (const p of (n as unknown as { params: string[] }).params) params.add(p);
  });
  const columns = new Map<string, { expr: Expr; name: string }>();
  const nameOf = (id: Identifier): string | undefined => {
    const key = id.parts.join('.');
    const last = id.parts.at(-1) as string;
    if (id.parts.length === 1 && (aliases.has(last) || params.has(last) || WINDOW_COLUMNS.has(last)))
      return undefined;
    if (last === '_tp_delta') return undefined; // the nested join's own (nested-changelog-join.ts)
    let c = columns.get(key);
    if (!c) {
      c = { expr: id, name: `__sj${columns.size}` };
      columns.set(key, c);
    }
    return c.name;
  };
  const rename = <T extends object>(node: T): T =>
    replace(node as never, (n) => {
      if (n.kind === 'Subquery' || n.kind === 'SubqueryTable' || n.kind === 'Select') return n;
      if (n.kind !== 'Identifier') return undefined;
      const id = n as unknown as Identifier;
      const to = nameOf(id);
      return to ? ({ ...id, parts: [to] } as unknown as AnyNode) : undefined;
    }) as T;

  // The session's own arguments name the left side's columns, unqualified.
  const args = splitWindowArgs('session', w.args, 2);
  const onLeft = (e: Expr): Expr =>
    replace(e as never, (n) =>
      n.kind === 'Identifier' && (n as unknown as Identifier).parts.length === 1
        ? ({ ...(n as object), parts: [windowAlias, (n as unknown as Identifier).parts[0]] } as never)
        : undefined,
    ) as Expr;
  const time = rename(onLeft(args.timeColumn ?? { kind: 'Identifier', parts: ['_tp_time'], span: NO_SPAN }));
  const rest = args.rest.map((e) => rename(onLeft(e)));

  const outerColumns = select.columns.map((c): Expr => {
    const out = rename(c);
    if (out === c || c.kind === 'Alias') return out;
    return { kind: 'Alias', expr: out, alias: protonColumnName(c), span: NO_SPAN };
  });
  const outer: SelectQuery = {
    ...select,
    columns: outerColumns,
    ...(select.prewhere ? { prewhere: rename(select.prewhere) } : {}),
    ...(select.where ? { where: rename(select.where) } : {}),
    ...(select.groupBy ? { groupBy: rename(select.groupBy) } : {}),
    ...(select.having ? { having: rename(select.having) } : {}),
    ...(select.orderBy ? { orderBy: select.orderBy.map((o) => rename(o)) } : {}),
    ...(select.partitionBy ? { partitionBy: select.partitionBy.map((p) => rename(p)) } : {}),
    ...(select.limitBy ? { limitBy: rename(select.limitBy) } : {}),
  };
  const stream: FromItem = {
    kind: 'Table',
    ...(db !== undefined ? { database: db } : {}),
    name,
    alias: windowAlias,
    span: w.span,
  };
  const join = withFirst(from, stream);
  const inner: SelectQuery = {
    kind: 'Select',
    distinct: false,
    columns: [...columns.values()].map(
      (c): Expr => ({ kind: 'Alias', expr: c.expr, alias: c.name, span: NO_SPAN }),
    ),
    from: join,
    span: NO_SPAN,
  };
  const session: TableFunctionRef = {
    kind: 'TableFunction',
    name: w.name,
    args: [{ kind: 'Subquery', query: inner, span: NO_SPAN } as Expr, time, ...args.intervals, ...rest],
    alias: windowAlias,
    span: w.span,
  };
  return { ...outer, from: session };
}

/** The join with its left-most item replaced. */
function withFirst(j: JoinExpr, item: FromItem): JoinExpr {
  return { ...j, left: j.left.kind === 'Join' ? withFirst(j.left, item) : item };
}
