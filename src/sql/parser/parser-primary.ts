import type {
  Asterisk,
  ColumnsMatcher,
  Expr,
  FrameBound,
  FunctionCall,
  Identifier,
  IntervalUnit,
  OrderItem,
  WindowFrame,
  WindowSpec,
} from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import type { Span } from '../ast/span.ts';
import { canBeBareAlias, NON_EXPRESSION_WORDS } from '../syntax/keywords.ts';
import { SHORTHAND_UNITS, type ShorthandSuffix, type Token } from '../syntax/tokens.ts';
import { type DataType, parseDataType, TypeSyntaxError } from '../types/data-type.ts';
import { TokenCursor } from './token-cursor.ts';

const INTERVAL_UNITS: Record<string, IntervalUnit> = {
  NANOSECOND: 'NANOSECOND',
  MICROSECOND: 'MICROSECOND',
  MILLISECOND: 'MILLISECOND',
  SECOND: 'SECOND',
  MINUTE: 'MINUTE',
  HOUR: 'HOUR',
  DAY: 'DAY',
  WEEK: 'WEEK',
  MONTH: 'MONTH',
  QUARTER: 'QUARTER',
  YEAR: 'YEAR',
};
for (const u of Object.keys(INTERVAL_UNITS)) INTERVAL_UNITS[`${u}S`] = INTERVAL_UNITS[u] as IntervalUnit;
Object.assign(INTERVAL_UNITS, {
  NS: 'NANOSECOND',
  US: 'MICROSECOND',
  MS: 'MILLISECOND',
  SS: 'SECOND',
  MI: 'MINUTE',
  HH: 'HOUR',
  DD: 'DAY',
  WK: 'WEEK',
  MM: 'MONTH',
  QQ: 'QUARTER',
  YY: 'YEAR',
  YYYY: 'YEAR',
});

/** Options of `expression()`. */
export interface ExprOptions {
  /** Disallow `a:b` JSON access (map literal keys). */
  readonly noJson?: boolean;
}

/**
 * The operands of expressions: literals, names, `*` and COLUMNS(), calls (with DISTINCT, FILTER,
 * OVER), CASE, CAST, INTERVAL, parenthesised expressions and subqueries, arrays, tuples, maps; and
 * the small shared pieces (names, string literals, aliases, data types, window specs).
 * Operators are parsed by the subclass (parser-expression.ts).
 */
export abstract class PrimaryParser extends TokenCursor {
  /** Parse a query (SELECT / UNION); provided by the query parser. */
  abstract query(): Query;

  /** A whole expression; provided by the operator parser. */
  abstract expression(opts?: ExprOptions): Expr;

  /** An operand with an optional unary sign (interval operands); provided by the operator parser. */
  abstract unary(opts?: ExprOptions): Expr;

  /** ORDER BY items (window specs use them); provided by the operator parser. */
  abstract orderList(): OrderItem[];

  /** Does a query start here (SELECT or WITH)? */
  startsQuery(ahead = 0): boolean {
    const t = this.peek(ahead);
    return TokenCursor.isWord(t, 'SELECT') || TokenCursor.isWord(t, 'WITH');
  }

  /** A name: an identifier word or a quoted identifier. */
  name(what = 'identifier'): string {
    const t = this.token;
    if (t.type === 'ident' || t.type === 'quoted') {
      this.pos++;
      return t.value;
    }
    this.expect(what);
    this.fail();
  }

  isName(): boolean {
    const t = this.token;
    return t.type === 'ident' || t.type === 'quoted';
  }

  /** A string literal's value. */
  stringLiteral(what = 'string literal'): string {
    const t = this.token;
    if (t.type === 'string') {
      this.pos++;
      return t.value;
    }
    this.expect(what);
    this.fail();
  }

  /** `name [. name]*` */
  qualifiedParts(): string[] {
    const parts = [this.name()];
    while (
      this.token.type === 'op' &&
      this.token.value === '.' &&
      (this.peek().type === 'ident' || this.peek().type === 'quoted')
    ) {
      this.pos++;
      parts.push(this.name());
    }
    return parts;
  }

  /** An expression optionally followed by `AS alias` (or a bare alias when `bare`). */
  expressionWithAlias(bare = false): Expr {
    const start = this.token.start;
    const expr = this.expression();
    return this.optionalAlias(expr, start, bare);
  }

  optionalAlias(expr: Expr, start: number, bare: boolean): Expr {
    if (this.acceptKeyword('AS')) {
      const alias = this.name('alias');
      return { kind: 'Alias', expr, alias, span: this.spanFrom(start) };
    }
    const t = this.token;
    if (bare && ((t.type === 'ident' && canBeBareAlias(t.value)) || t.type === 'quoted')) {
      this.pos++;
      return { kind: 'Alias', expr, alias: t.value, span: this.spanFrom(start) };
    }
    return expr;
  }

  /** A comma-separated list of expressions (with optional `AS` aliases). */
  expressionList(bare = false): Expr[] {
    const list = [this.expressionWithAlias(bare)];
    while (this.acceptOp(',')) list.push(this.expressionWithAlias(bare));
    return list;
  }

  protected intervalShorthand(sign: '' | '-'): Expr & { kind: 'Interval' } {
    const t = this.advance();
    const unit = SHORTHAND_UNITS[t.unit as ShorthandSuffix];
    const value = {
      kind: 'Number' as const,
      text: sign + t.value,
      span: { start: t.start, end: t.start + t.value.length },
    };
    return { kind: 'Interval', value, unit, shorthand: true, span: { start: t.start, end: t.end } };
  }

  /** Is the current token an interval unit word? Returns it without consuming. */
  private intervalUnitAt(t: Token): IntervalUnit | undefined {
    return t.type === 'ident' ? INTERVAL_UNITS[t.value.toUpperCase()] : undefined;
  }

  // --- primary ---

  protected primary(): Expr {
    const t = this.token;
    const start = t.start;
    switch (t.type) {
      case 'number':
        this.pos++;
        return { kind: 'Number', text: t.value, span: this.spanFrom(start) };
      case 'interval':
        return this.intervalShorthand('');
      case 'string':
        this.pos++;
        return { kind: 'String', value: t.value, span: this.spanFrom(start) };
      case 'quoted':
        return this.identifierOrStar();
      case 'op':
        if (t.value === '(') return this.parenthesised();
        if (t.value === '[') {
          this.pos++;
          const elements = this.isOp(']') ? [] : this.expressionList();
          if (elements.length === 2 && this.acceptOp(')')) return this.range(elements, true, false, start);
          this.expectOp(']');
          return { kind: 'Array', elements, span: this.spanFrom(start) };
        }
        if (t.value === '{') return this.mapLiteral();
        if (t.value === '*') return this.asterisk(start, undefined);
        break;
      case 'ident':
        return this.word();
      default:
        break;
    }
    this.expect('expression');
    this.fail();
  }

  private parenthesised(): Expr {
    const start = this.token.start;
    this.pos++;
    if (this.startsQuery()) {
      const query = this.query();
      this.expectOp(')');
      return { kind: 'Subquery', query, span: this.spanFrom(start) };
    }
    if (this.acceptOp(')')) return { kind: 'Tuple', elements: [], span: this.spanFrom(start) };
    const first = this.expressionWithAlias();
    if (this.acceptOp(')')) {
      // A parenthesised subquery followed by UNION etc. is handled by the query parser.
      return first;
    }
    const elements = [first];
    while (this.acceptOp(',')) {
      if (this.isOp(')')) break; // `(a,)`: a one-element tuple
      elements.push(this.expressionWithAlias());
    }
    if (elements.length === 2 && this.acceptOp(']')) return this.range(elements, false, true, start);
    this.expectOp(')');
    return { kind: 'Tuple', elements, span: this.spanFrom(start) };
  }

  private range(bounds: Expr[], startInclusive: boolean, endInclusive: boolean, start: number): Expr {
    const [from, to] = bounds as [Expr, Expr];
    return { kind: 'Range', start: from, end: to, startInclusive, endInclusive, span: this.spanFrom(start) };
  }

  private mapLiteral(): Expr {
    const start = this.token.start;
    this.pos++;
    const entries: { key: Expr; value: Expr }[] = [];
    if (!this.isOp('}')) {
      do {
        const key = this.expression({ noJson: true });
        this.expectOp(':');
        const value = this.expression();
        entries.push({ key, value });
      } while (this.acceptOp(','));
    }
    this.expectOp('}');
    return { kind: 'Map', entries, span: this.spanFrom(start) };
  }

  private word(): Expr {
    const t = this.token;
    const start = t.start;
    const upper = t.value.toUpperCase();
    const next = this.peek();
    const call = next.type === 'op' && next.value === '(';
    switch (upper) {
      case 'NULL':
        this.pos++;
        return { kind: 'Null', span: this.spanFrom(start) };
      case 'TRUE':
      case 'FALSE':
        if (call) break;
        this.pos++;
        return { kind: 'Bool', value: upper === 'TRUE', span: this.spanFrom(start) };
      case 'INF':
      case 'INFINITY':
      case 'NAN':
        if (call || (next.type === 'op' && next.value === '.')) break;
        this.pos++;
        return { kind: 'Number', text: t.value.toLowerCase(), span: this.spanFrom(start) };
      case 'CASE':
        return this.caseExpr();
      case 'CAST':
        if (call) return this.castCall();
        break;
      case 'INTERVAL':
        if (
          next.type === 'number' ||
          next.type === 'string' ||
          (next.type === 'op' && (next.value === '(' || next.value === '-')) ||
          (next.type === 'ident' && !NON_EXPRESSION_WORDS.has(next.value.toUpperCase()))
        ) {
          return this.intervalExpr();
        }
        break;
      case 'COLUMNS':
        if (call) return this.columnsMatcher(start, undefined);
        break;
      default:
        break;
    }
    if (call) return this.functionCall();
    if (NON_EXPRESSION_WORDS.has(upper)) {
      this.expect('expression');
      this.fail();
    }
    return this.identifierOrStar();
  }

  /** `a`, `a.b.c`, `t.*`, `t.COLUMNS(...)` */
  private identifierOrStar(): Expr {
    const start = this.token.start;
    const parts = [this.name()];
    while (this.token.type === 'op' && this.token.value === '.') {
      const n = this.peek();
      if (n.type === 'ident' || n.type === 'quoted') {
        if (
          n.type === 'ident' &&
          n.value.toUpperCase() === 'COLUMNS' &&
          this.peek(2).type === 'op' &&
          this.peek(2).value === '('
        ) {
          this.pos += 2;
          return this.columnsMatcher(start, parts, true);
        }
        this.pos++;
        parts.push(this.name());
      } else if (n.type === 'op' && n.value === '*') {
        this.pos++;
        return this.asterisk(start, parts);
      } else break;
    }
    return { kind: 'Identifier', parts, span: this.spanFrom(start) } satisfies Identifier;
  }

  /** `*` then optional `EXCEPT (a, b)` / `EXCEPT a`. */
  private asterisk(start: number, qualifier: string[] | undefined): Asterisk {
    this.expectOp('*');
    const except = this.exceptList();
    return {
      kind: 'Asterisk',
      ...(qualifier ? { qualifier } : {}),
      ...(except ? { except } : {}),
      span: this.spanFrom(start),
    };
  }

  /**
   * `EXCEPT (a, b)` or `EXCEPT a` after `*` / `COLUMNS(..)`. `EXPECT` is accepted as a misspelling
   * of EXCEPT, as Proton's own test suite writes `(* expect _tp_time)`.
   */
  private exceptList(): string[] | undefined {
    const t = this.token;
    if (!(TokenCursor.isWord(t, 'EXCEPT') || TokenCursor.isWord(t, 'EXPECT'))) {
      this.expect('EXCEPT');
      return undefined;
    }
    const n = this.peek();
    // `SELECT * FROM a EXCEPT SELECT ...` is a set operation, not a column list.
    if (TokenCursor.isWord(n, 'SELECT') || TokenCursor.isWord(n, 'WITH')) return undefined;
    this.pos++;
    if (this.acceptOp('(')) {
      const names = [this.exceptName()];
      while (this.acceptOp(',')) names.push(this.exceptName());
      this.expectOp(')');
      return names;
    }
    return [this.exceptName()];
  }

  private exceptName(): string {
    return this.qualifiedParts().join('.');
  }

  /** `COLUMNS('re')` or `COLUMNS(a, b)` with the name token current (or already consumed when `consumed`). */
  private columnsMatcher(start: number, qualifier: string[] | undefined, consumed = false): ColumnsMatcher {
    if (!consumed) this.pos++;
    this.expectOp('(');
    let pattern: string | undefined;
    let columns: Identifier[] | undefined;
    if (this.token.type === 'string') pattern = this.advance().value;
    else {
      columns = [];
      do {
        const s = this.token.start;
        columns.push({ kind: 'Identifier', parts: this.qualifiedParts(), span: this.spanFrom(s) });
      } while (this.acceptOp(','));
    }
    this.expectOp(')');
    const except = this.exceptList();
    return {
      kind: 'Columns',
      ...(qualifier ? { qualifier } : {}),
      ...(pattern !== undefined ? { pattern } : {}),
      ...(columns ? { columns } : {}),
      ...(except ? { except } : {}),
      span: this.spanFrom(start),
    };
  }

  private caseExpr(): Expr {
    const start = this.token.start;
    this.pos++;
    const operand = this.isKeyword('WHEN') ? undefined : this.expression();
    const whens: { when: Expr; result: Expr }[] = [];
    while (this.acceptKeyword('WHEN')) {
      const when = this.expression();
      this.expectKeyword('THEN');
      whens.push({ when, result: this.expression() });
    }
    if (whens.length === 0) {
      this.expect('WHEN');
      this.fail();
    }
    const otherwise = this.acceptKeyword('ELSE') ? this.expression() : undefined;
    this.expectKeyword('END');
    return {
      kind: 'Case',
      ...(operand ? { operand } : {}),
      whens,
      ...(otherwise ? { else: otherwise } : {}),
      span: this.spanFrom(start),
    };
  }

  /** `CAST(x AS type)`; the two-argument form `CAST(x, 'type')` stays a function call. */
  private castCall(): Expr {
    const save = this.pos;
    const start = this.token.start;
    this.pos += 2;
    const expr = this.expression();
    if (this.acceptKeyword('AS')) {
      const type = this.dataType();
      this.expectOp(')');
      return { kind: 'Cast', expr, type, syntax: 'cast', span: this.spanFrom(start) };
    }
    this.pos = save;
    return this.functionCall();
  }

  /** `INTERVAL 5 SECOND`, `INTERVAL '5' SECOND`, `INTERVAL '5 second'`, `INTERVAL n * 5 SECOND`. */
  private intervalExpr(): Expr {
    const start = this.token.start;
    this.pos++;
    const t = this.token;
    if (t.type === 'string') {
      const m = /^\s*([-+]?\d+(?:\.\d+)?)\s+([A-Za-z]+)\s*$/.exec(t.value);
      const unit = m ? INTERVAL_UNITS[(m[2] as string).toUpperCase()] : undefined;
      if (m && unit && !this.intervalUnitAt(this.peek())) {
        this.pos++;
        const value = {
          kind: 'String' as const,
          value: m[1] as string,
          span: { start: t.start, end: t.end },
        };
        return { kind: 'Interval', value, unit, shorthand: false, span: this.spanFrom(start) };
      }
    }
    const valueStart = this.pos;
    let value = this.unary();
    if (!this.intervalUnitAt(this.token) && this.token.type === 'op') {
      // `INTERVAL number * 300 SECOND`: the value is an expression up to the unit word
      this.pos = valueStart;
      value = this.expression();
    }
    const unit = this.intervalUnitAt(this.token);
    if (!unit) {
      this.expect('interval unit (SECOND, MINUTE, ...)');
      this.fail();
    }
    this.pos++;
    return { kind: 'Interval', value, unit, shorthand: false, span: this.spanFrom(start) };
  }

  private functionCall(): FunctionCall {
    const start = this.token.start;
    const name = this.advance().value;
    this.expectOp('(');
    let distinct = false;
    if (this.acceptKeyword('DISTINCT')) distinct = true;
    else if (
      TokenCursor.isWord(this.token, 'ALL') &&
      !(this.peek().type === 'op' && (this.peek().value === ')' || this.peek().value === ','))
    )
      this.pos++;
    const args = this.isOp(')') ? [] : this.expressionList();
    this.expectOp(')');
    let params: Expr[] | undefined;
    if (this.token.type === 'op' && this.token.value === '(' && !this.token.spaceBefore) {
      // ClickHouse parametric form f(params)(args).
      this.pos++;
      params = args.slice();
      const inner = this.isOp(')') ? [] : this.expressionList();
      this.expectOp(')');
      return this.withOver(
        { kind: 'Function', name, args: inner, distinct, params, span: this.spanFrom(start) },
        start,
      );
    }
    return this.withOver({ kind: 'Function', name, args, distinct, span: this.spanFrom(start) }, start);
  }

  private withOver(call: FunctionCall, start: number): FunctionCall {
    if (
      this.isKeyword('FILTER') &&
      this.peek().type === 'op' &&
      this.peek().value === '(' &&
      TokenCursor.isWord(this.peek(2), 'WHERE')
    ) {
      this.pos += 3;
      const filter = this.expression();
      this.expectOp(')');
      call = { ...call, filter, span: this.spanFrom(start) };
    }
    if (!this.acceptKeyword('OVER')) return call;
    if (this.isName() && !this.isOp('(')) {
      const over = this.name('window name');
      return { ...call, over, span: this.spanFrom(start) };
    }
    const over = this.windowSpec();
    return { ...call, over, span: this.spanFrom(start) };
  }

  /** `( [base] [PARTITION BY ..] [ORDER BY ..] [ROWS|RANGE ..] )` */
  windowSpec(): WindowSpec {
    const start = this.token.start;
    this.expectOp('(');
    let base: string | undefined;
    if (
      this.isName() &&
      !this.isKeyword('PARTITION') &&
      !this.isKeyword('ORDER') &&
      !this.isKeyword('ROWS') &&
      !this.isKeyword('RANGE')
    ) {
      base = this.name();
    }
    const partitionBy = this.acceptKeyword('PARTITION BY') ? this.expressionList() : [];
    const orderBy = this.acceptKeyword('ORDER BY') ? this.orderList() : [];
    const frame = this.windowFrame();
    this.expectOp(')');
    return {
      kind: 'WindowSpec',
      ...(base ? { base } : {}),
      partitionBy,
      orderBy,
      ...(frame ? { frame } : {}),
      span: this.spanFrom(start),
    };
  }

  private windowFrame(): WindowFrame | undefined {
    const units = this.acceptAnyKeyword('ROWS', 'RANGE');
    if (!units) return undefined;
    if (this.acceptKeyword('BETWEEN')) {
      const startBound = this.frameBound();
      this.expectKeyword('AND');
      const end = this.frameBound();
      return { units, start: startBound, end };
    }
    return { units, start: this.frameBound() };
  }

  private frameBound(): FrameBound {
    if (this.acceptKeyword('CURRENT ROW')) return { kind: 'CURRENT ROW' };
    if (this.acceptKeyword('UNBOUNDED PRECEDING')) return { kind: 'UNBOUNDED PRECEDING' };
    if (this.acceptKeyword('UNBOUNDED FOLLOWING')) return { kind: 'UNBOUNDED FOLLOWING' };
    const offset = this.unary();
    const dir = this.acceptAnyKeyword('PRECEDING', 'FOLLOWING');
    if (!dir) this.fail();
    return { kind: dir, offset };
  }

  /**
   * A data type written at the current position: a name, optionally followed by balanced
   * parentheses. The text is handed to `parseDataType` (src/sql/types/data-type.ts).
   */
  dataType(): DataType {
    const t = this.token;
    if (t.type !== 'ident' && t.type !== 'quoted') {
      this.expect('data type');
      this.fail();
    }
    const start = t.start;
    this.pos++;
    let end = t.end;
    if (this.token.type === 'op' && this.token.value === '(') {
      let depth = 0;
      for (;;) {
        const x = this.token;
        if (x.type === 'eof') this.fail('Unbalanced parentheses in data type');
        this.pos++;
        if (x.type === 'op' && x.value === '(') depth++;
        else if (x.type === 'op' && x.value === ')' && --depth === 0) {
          end = x.end;
          break;
        }
      }
    }
    const text = this.source.slice(start, end);
    try {
      return parseDataType(text);
    } catch (e) {
      if (e instanceof TypeSyntaxError) this.failAt(start + e.offset, `Invalid data type: ${e.message}`);
      throw e;
    }
  }

  /** The span of a single consumed token. */
  tokenSpan(t: Token): Span {
    return { start: t.start, end: t.end };
  }
}
