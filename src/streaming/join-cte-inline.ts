import type { Expr } from '../sql/ast/expression.ts';
import type { FromItem, JoinExpr, SelectQuery } from '../sql/ast/query.ts';
import { type AnyNode, replace, walk } from '../sql/ast/walk.ts';
import { isClauseFreeSelect } from './clause-free-select.ts';

/**
 * `WITH t AS (SELECT * FROM a JOIN b ON ...) SELECT ... FROM t JOIN c ON t.x = c.y`: the CTE
 * is a join passed through whole, so the query is the chain `a JOIN b ON ... JOIN c ON x = c.y`
 * (0013_changelogstream_join_table5 ids 189-204). Inlined so the join planner sees every side
 * of the chain: the CTE's body must be `SELECT *` (or `a.*, b.*`) of a join and nothing else, and
 * the query must name it once, as the left-most side of its FROM. Columns the query reads through
 * the CTE's name (`t.x`) are read by their own name (`x`), as the join's `*` exposes them.
 * Anything else is answered unchanged.
 */
export function inlineJoinCte(select: SelectQuery): SelectQuery {
  const from = select.from;
  if (from?.kind !== 'Join') return select;
  let leftmost: FromItem = from;
  while (leftmost.kind === 'Join') leftmost = leftmost.left;
  if (leftmost.kind !== 'Table' || leftmost.database !== undefined) return select;
  const name = leftmost.name;
  const cte = select.with?.find((w) => w.kind === 'Cte' && w.name === name);
  if (cte?.kind !== 'Cte' || cte.query.kind !== 'Select') return select;
  const body = cte.query;
  if (!isPassThroughJoin(body) || countTableRefs(select, name) !== 1) return select;
  const alias = leftmost.alias ?? name;
  const unqualify = <T extends AnyNode>(node: T): T =>
    replace(node, (n) => {
      if (n.kind !== 'Identifier') return undefined;
      const parts = (n as unknown as Expr & { kind: 'Identifier' }).parts;
      if (parts.length !== 2 || parts[0] !== alias) return undefined;
      return { ...(n as object), parts: [parts[1]] } as unknown as AnyNode;
    });
  const swapLeftmost = (item: FromItem): FromItem =>
    item.kind === 'Join'
      ? {
          ...item,
          left: swapLeftmost(item.left),
          ...(item.on ? { on: unqualify(item.on as AnyNode) as Expr } : {}),
        }
      : (body.from as JoinExpr);
  const rest = select.with?.filter((w) => w !== cte) ?? [];
  const inlined: SelectQuery = {
    ...select,
    ...(rest.length ? { with: [...(body.with ?? []), ...rest] } : body.with ? { with: body.with } : {}),
    columns: select.columns.map((c) => unqualify(c as AnyNode) as Expr),
    from: swapLeftmost(from),
    ...(select.where ? { where: unqualify(select.where as AnyNode) as Expr } : {}),
  };
  if (!rest.length && !body.with) {
    const { with: _with, ...noWith } = inlined;
    return noWith;
  }
  return inlined;
}

/** `SELECT * FROM <join>` (or `a.*, b.*`), with no filter, grouping, order or limit. */
function isPassThroughJoin(q: SelectQuery): boolean {
  return q.from?.kind === 'Join' && isClauseFreeSelect(q) && q.columns.every((c) => c.kind === 'Asterisk');
}

/** How many times a FROM names `name` as a table (the CTE reads). */
function countTableRefs(select: SelectQuery, name: string): number {
  let n = 0;
  walk(select as unknown as AnyNode, (node) => {
    if (node.kind === 'Table') {
      const t = node as unknown as { database?: string; name: string };
      if (t.database === undefined && t.name === name) n++;
    }
    return undefined;
  });
  return n;
}
