import type { DataType } from '../types/data-type.ts';
import type { Query } from './query.ts';
import type { Span } from './span.ts';

/**
 * Expression nodes. Every node is an immutable object tagged by `kind` and carries its `span`.
 * Names (identifiers, function names) are kept exactly as written; keywords are normalised.
 */
export type Expr =
  | NumberLiteral
  | StringLiteral
  | NullLiteral
  | BoolLiteral
  | ArrayLiteral
  | TupleLiteral
  | MapLiteral
  | IntervalExpr
  | Identifier
  | Asterisk
  | ColumnsMatcher
  | FunctionCall
  | Lambda
  | UnaryExpr
  | BinaryExpr
  | BetweenExpr
  | IsNullExpr
  | CaseExpr
  | CastExpr
  | JsonAccess
  | SubscriptExpr
  | TupleElementExpr
  | TernaryExpr
  | SubqueryExpr
  | RangeExpr
  | AliasExpr;

/** A number as written: `42`, `0x1F`, `1.5e-3`, `.5`, `inf`, `nan`. The sign is a separate unary minus. */
export interface NumberLiteral {
  readonly kind: 'Number';
  readonly text: string;
  readonly span: Span;
}

/** A string literal; `value` is the decoded text (escapes resolved). */
export interface StringLiteral {
  readonly kind: 'String';
  readonly value: string;
  readonly span: Span;
}

export interface NullLiteral {
  readonly kind: 'Null';
  readonly span: Span;
}

export interface BoolLiteral {
  readonly kind: 'Bool';
  readonly value: boolean;
  readonly span: Span;
}

/** `[a, b, c]` */
export interface ArrayLiteral {
  readonly kind: 'Array';
  readonly elements: readonly Expr[];
  readonly span: Span;
}

/** `(a, b)` (two or more elements), `(a,)` (one), `()` (none). `(a)` is just `a`. */
export interface TupleLiteral {
  readonly kind: 'Tuple';
  readonly elements: readonly Expr[];
  readonly span: Span;
}

/** `{k1: v1, k2: v2}` */
export interface MapLiteral {
  readonly kind: 'Map';
  readonly entries: readonly { readonly key: Expr; readonly value: Expr }[];
  readonly span: Span;
}

export type IntervalUnit =
  | 'NANOSECOND'
  | 'MICROSECOND'
  | 'MILLISECOND'
  | 'SECOND'
  | 'MINUTE'
  | 'HOUR'
  | 'DAY'
  | 'WEEK'
  | 'MONTH'
  | 'QUARTER'
  | 'YEAR';

/**
 * `INTERVAL 5 SECOND` (shorthand false) or Proton's `5s` (shorthand true, value a Number whose
 * text may carry a sign: `-10s`).
 */
export interface IntervalExpr {
  readonly kind: 'Interval';
  readonly value: Expr;
  readonly unit: IntervalUnit;
  readonly shorthand: boolean;
  readonly span: Span;
}

/** A (possibly qualified) name: `col`, `t.col`, `db.t.col`. Parts are unquoted, case kept. */
export interface Identifier {
  readonly kind: 'Identifier';
  readonly parts: readonly string[];
  readonly span: Span;
}

/** `*`, `t.*`, `* EXCEPT (a, b)`, `* EXCEPT a`. */
export interface Asterisk {
  readonly kind: 'Asterisk';
  readonly qualifier?: readonly string[];
  readonly except?: readonly string[];
  readonly span: Span;
}

/** `COLUMNS('regexp')` or `COLUMNS(a, b)`, optionally qualified and with EXCEPT. */
export interface ColumnsMatcher {
  readonly kind: 'Columns';
  readonly qualifier?: readonly string[];
  readonly pattern?: string;
  readonly columns?: readonly Identifier[];
  readonly except?: readonly string[];
  readonly span: Span;
}

/** A window specification for `OVER (...)`. */
export interface WindowSpec {
  readonly kind: 'WindowSpec';
  /** `OVER (w ...)`: the name of a window from the WINDOW clause this one extends. */
  readonly base?: string;
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly OrderItem[];
  readonly frame?: WindowFrame;
  readonly span: Span;
}

export interface WindowFrame {
  readonly units: 'ROWS' | 'RANGE';
  readonly start: FrameBound;
  readonly end?: FrameBound;
}

export type FrameBound =
  | { readonly kind: 'CURRENT ROW' }
  | { readonly kind: 'UNBOUNDED PRECEDING' | 'UNBOUNDED FOLLOWING' }
  | { readonly kind: 'PRECEDING' | 'FOLLOWING'; readonly offset: Expr };

/** One item of ORDER BY (queries and window specs). */
export interface OrderItem {
  readonly kind: 'OrderItem';
  readonly expr: Expr;
  readonly direction?: 'ASC' | 'DESC';
  readonly nulls?: 'FIRST' | 'LAST';
  readonly collate?: string;
  readonly fill?: { readonly from?: Expr; readonly to?: Expr; readonly step?: Expr };
  readonly span: Span;
}

/**
 * A function call, name as written: `count()`, `count(DISTINCT x)`, `quantile(x, 0.9)`,
 * `sum(x) OVER (PARTITION BY k)`, `row_number() OVER w`.
 */
export interface FunctionCall {
  readonly kind: 'Function';
  readonly name: string;
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  /** ClickHouse-style parameters `f(params)(args)`; Proton writes parameters as trailing args. */
  readonly params?: readonly Expr[];
  /** `FILTER (WHERE cond)` of an aggregate (`max(x) FILTER (WHERE c)` = `max_if(x, c)`). */
  readonly filter?: Expr;
  /** `OVER (...)` or `OVER name`. */
  readonly over?: WindowSpec | string;
  readonly span: Span;
}

/** `x -> x + 1`, `(x, y) -> x + y`. */
export interface Lambda {
  readonly kind: 'Lambda';
  readonly params: readonly string[];
  readonly body: Expr;
  readonly span: Span;
}

export interface UnaryExpr {
  readonly kind: 'Unary';
  readonly op: '-' | 'NOT';
  readonly operand: Expr;
  readonly span: Span;
}

export type BinaryOp =
  | 'OR'
  | 'AND'
  | '='
  | '!='
  | '<'
  | '>'
  | '<='
  | '>='
  | 'LIKE'
  | 'NOT LIKE'
  | 'ILIKE'
  | 'NOT ILIKE'
  | 'IN'
  | 'NOT IN'
  | 'GLOBAL IN'
  | 'GLOBAL NOT IN'
  | '||'
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | 'DIV';

/** Binary operators. `==` parses as `=`, `<>` as `!=`, `MOD` as `%`. */
export interface BinaryExpr {
  readonly kind: 'Binary';
  readonly op: BinaryOp;
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

/** `x [NOT] BETWEEN low AND high` */
export interface BetweenExpr {
  readonly kind: 'Between';
  readonly expr: Expr;
  readonly low: Expr;
  readonly high: Expr;
  readonly not: boolean;
  readonly span: Span;
}

/** `x IS [NOT] NULL` */
export interface IsNullExpr {
  readonly kind: 'IsNull';
  readonly expr: Expr;
  readonly not: boolean;
  readonly span: Span;
}

/** `CASE [operand] WHEN .. THEN .. [ELSE ..] END` */
export interface CaseExpr {
  readonly kind: 'Case';
  readonly operand?: Expr;
  readonly whens: readonly { readonly when: Expr; readonly result: Expr }[];
  readonly else?: Expr;
  readonly span: Span;
}

/** `CAST(x AS type)` (syntax 'cast') or `x::type` (syntax 'colons'). The type is kept as written. */
export interface CastExpr {
  readonly kind: 'Cast';
  readonly expr: Expr;
  readonly type: DataType;
  readonly syntax: 'cast' | 'colons';
  readonly span: Span;
}

/** Proton's JSON path shortcut `raw:a.b` (= `json_value(raw, '$.a.b')`); `path` is `a.b`. */
export interface JsonAccess {
  readonly kind: 'JsonAccess';
  readonly object: Expr;
  readonly path: string;
  readonly span: Span;
}

/** `a[i]`, `m['key']` */
export interface SubscriptExpr {
  readonly kind: 'Subscript';
  readonly object: Expr;
  readonly index: Expr;
  readonly span: Span;
}

/** `t.1`: a tuple element by position (named elements parse as identifiers). */
export interface TupleElementExpr {
  readonly kind: 'TupleElement';
  readonly object: Expr;
  readonly index: number;
  readonly span: Span;
}

/** `cond ? a : b` */
export interface TernaryExpr {
  readonly kind: 'Ternary';
  readonly condition: Expr;
  readonly whenTrue: Expr;
  readonly whenFalse: Expr;
  readonly span: Span;
}

/** A parenthesised query used as a value: `(SELECT ...)`, `x IN (SELECT ...)`, `EXISTS (SELECT ...)` args. */
export interface SubqueryExpr {
  readonly kind: 'Subquery';
  readonly query: Query;
  readonly span: Span;
}

/**
 * A range with explicit bounds, `[start_cond, end_cond)` or `(start_cond, end_cond]`: Proton's
 * session-window start/end predicates (`session(s, 5s, [a = 1, a = 2))`), where `[`/`]` include
 * the bound and `(`/`)` exclude it. Matching brackets parse as an Array (`[a, b]`) or Tuple (`(a, b)`).
 */
export interface RangeExpr {
  readonly kind: 'Range';
  readonly start: Expr;
  readonly end: Expr;
  readonly startInclusive: boolean;
  readonly endInclusive: boolean;
  readonly span: Span;
}

/** `expr AS name` (also a bare alias `expr name` in select lists). */
export interface AliasExpr {
  readonly kind: 'Alias';
  readonly expr: Expr;
  readonly alias: string;
  readonly span: Span;
}

/** A `key = value` pair of a SETTINGS clause. */
export interface Setting {
  readonly kind: 'Setting';
  readonly name: string;
  readonly value: Expr;
  readonly span: Span;
}
