import type { Expr, Identifier, OrderItem, Setting, WindowSpec } from './expression.ts';
import type { Span } from './span.ts';

/** A query: one SELECT, or several combined with UNION. */
export type Query = SelectQuery | UnionQuery;

/**
 * `q1 UNION ALL q2 UNION DISTINCT q3 ...`. `ops[i]` joins `queries[i]` and `queries[i + 1]`;
 * a plain `UNION` is kept as 'UNION' (its meaning depends on the `union_default_mode` setting).
 */
export interface UnionQuery {
  readonly kind: 'Union';
  readonly queries: readonly Query[];
  readonly ops: readonly ('UNION' | 'UNION ALL' | 'UNION DISTINCT')[];
  /** Output FORMAT of the whole statement. */
  readonly format?: string;
  readonly span: Span;
}

/** One item of WITH: a CTE `name AS (query)` or a named expression `expr AS name`. */
export type WithItem = CteItem | WithExprItem;

export interface CteItem {
  readonly kind: 'Cte';
  readonly name: string;
  readonly query: Query;
  readonly span: Span;
}

export interface WithExprItem {
  readonly kind: 'WithExpr';
  readonly expr: Expr;
  readonly name: string;
  readonly span: Span;
}

export interface GroupBy {
  readonly kind: 'GroupBy';
  readonly items: readonly Expr[];
  /** `GROUP BY ROLLUP(...)`/`CUBE(...)` or `... WITH ROLLUP`/`WITH CUBE`. */
  readonly modifier?: 'ROLLUP' | 'CUBE';
  /** `GROUP BY GROUPING SETS ((a), (a, b))`: each item is a Tuple of the set's expressions. */
  readonly groupingSets?: boolean;
  readonly withTotals: boolean;
  readonly span: Span;
}

export interface Limit {
  readonly kind: 'Limit';
  readonly limit: Expr;
  readonly offset?: Expr;
  readonly withTies: boolean;
  readonly span: Span;
}

/** `LIMIT n [OFFSET m] BY expr, ...` */
export interface LimitBy {
  readonly kind: 'LimitBy';
  readonly limit: Expr;
  readonly offset?: Expr;
  readonly by: readonly Expr[];
  readonly span: Span;
}

/**
 * The EMIT clause (streaming-sql-notes.md §1.6), normalised: the order of the policies in the text
 * does not matter, `WITH DELAY` and the old `AND DELAY` both set `delay`.
 * `EMIT STREAM` (mode 'stream') is the default and changes nothing.
 */
export interface EmitClause {
  readonly kind: 'Emit';
  readonly mode?: 'STREAM' | 'CHANGELOG';
  /** `AFTER WATERMARK`, or the newer spelling `AFTER WINDOW CLOSE` (windowClose true). */
  readonly afterWatermark: boolean;
  readonly windowClose?: boolean;
  readonly delay?: Expr;
  readonly periodic?: Expr;
  /** `PERIODIC i REPEAT` (newer). */
  readonly repeat?: boolean;
  readonly onUpdate: boolean;
  /** `ON UPDATE WITH BATCH i` (newer). */
  readonly onUpdateBatch?: Expr;
  readonly timeout?: Expr;
  readonly last?: Expr;
  readonly lastOnProctime?: boolean;
  readonly span: Span;
}

/** A named window of the WINDOW clause: `WINDOW w AS (PARTITION BY ...)`. */
export interface NamedWindow {
  readonly kind: 'NamedWindow';
  readonly name: string;
  readonly spec: WindowSpec;
  readonly span: Span;
}

/**
 * SELECT, with Proton's clause order:
 * WITH .. SELECT .. FROM .. PREWHERE .. WHERE .. PARTITION BY .. GROUP BY .. HAVING .. WINDOW ..
 * ORDER BY .. LIMIT .. BY .. LIMIT .. EMIT .. SETTINGS .. FORMAT.
 */
export interface SelectQuery {
  readonly kind: 'Select';
  readonly with?: readonly WithItem[];
  readonly distinct: boolean;
  readonly distinctOn?: readonly Expr[];
  readonly top?: Expr;
  readonly columns: readonly Expr[];
  readonly from?: FromItem;
  readonly prewhere?: Expr;
  readonly where?: Expr;
  /** Proton substreams: `PARTITION BY k` (after WHERE, before GROUP BY). */
  readonly partitionBy?: readonly Expr[];
  /** Proton `SHUFFLE BY col, ...`. */
  readonly shuffleBy?: readonly Expr[];
  readonly groupBy?: GroupBy;
  readonly having?: Expr;
  readonly windows?: readonly NamedWindow[];
  readonly orderBy?: readonly OrderItem[];
  readonly limitBy?: LimitBy;
  readonly limit?: Limit;
  readonly emit?: EmitClause;
  readonly settings?: readonly Setting[];
  readonly format?: string;
  readonly span: Span;
}

/** What FROM reads: a table, a table function, a subquery, or a join of those. */
export type FromItem = TableRef | TableFunctionRef | SubqueryRef | JoinExpr | ArrayJoinExpr;

/** `[db.]name [AS alias] [FINAL]` */
export interface TableRef {
  readonly kind: 'Table';
  readonly database?: string;
  readonly name: string;
  readonly alias?: string;
  readonly final?: boolean;
  readonly span: Span;
}

/**
 * A call in FROM: `table(s)`, `tumble(s, 5s)`, `hop(s, ts, 1s, 5s)`, `session(...)`,
 * `dedup(...)`, `changelog(...)`, `numbers(10)`, ... Arguments are expressions: a stream name is an
 * Identifier, a nested call (`tumble(table(s), 5s)`) a FunctionCall, a subquery a Subquery.
 */
export interface TableFunctionRef {
  readonly kind: 'TableFunction';
  readonly name: string;
  readonly args: readonly Expr[];
  readonly alias?: string;
  readonly span: Span;
}

/** `(SELECT ...) [AS alias]` */
export interface SubqueryRef {
  readonly kind: 'SubqueryTable';
  readonly query: Query;
  readonly alias?: string;
  readonly span: Span;
}

export type JoinKind = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS' | 'COMMA';
/** ALL/ANY (ClickHouse), ASOF, LATEST (Proton: keep the latest right row per key), SEMI/ANTI. */
export type JoinStrictness = 'ALL' | 'ANY' | 'ASOF' | 'LATEST' | 'SEMI' | 'ANTI';

/**
 * `left [GLOBAL] [kind] [OUTER] [strictness] JOIN right ON expr | USING (cols)`. A join without a
 * kind word is INNER; `a, b` is kind 'COMMA'.
 */
export interface JoinExpr {
  readonly kind: 'Join';
  readonly left: FromItem;
  readonly right: FromItem;
  readonly joinKind: JoinKind;
  readonly strictness?: JoinStrictness;
  readonly global?: boolean;
  readonly on?: Expr;
  readonly using?: readonly Identifier[];
  readonly span: Span;
}

/** `left [LEFT] ARRAY JOIN expr [AS alias], ...` */
export interface ArrayJoinExpr {
  readonly kind: 'ArrayJoin';
  readonly left: FromItem;
  readonly leftArrayJoin: boolean;
  readonly exprs: readonly Expr[];
  readonly span: Span;
}
