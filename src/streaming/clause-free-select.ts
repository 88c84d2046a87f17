import type { SelectQuery } from '../sql/ast/query.ts';

/**
 * A SELECT with no clause beyond its columns and FROM (no DISTINCT, WHERE, PREWHERE, GROUP BY,
 * HAVING, ORDER BY, LIMIT, LIMIT BY, PARTITION BY, EMIT or SETTINGS): one whose rows are its FROM's
 * rows, so a CTE made of it can be read as its FROM.
 */
export function isClauseFreeSelect(q: SelectQuery): boolean {
  return (
    !q.distinct &&
    q.columns.length > 0 &&
    !q.where &&
    !q.prewhere &&
    !q.groupBy &&
    !q.having &&
    !q.orderBy &&
    !q.limit &&
    !q.limitBy &&
    !q.partitionBy &&
    !q.emit &&
    !q.settings
  );
}
