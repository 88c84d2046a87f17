import type { BinaryOp, Expr, OrderItem, Setting } from '../ast/expression.ts';
import type { Span } from '../ast/span.ts';
import type { Token } from '../syntax/tokens.ts';
import { type ExprOptions, PrimaryParser } from './parser-primary.ts';
import { TokenCursor } from './token-cursor.ts';

const COMPARISON_OPS: Record<string, BinaryOp> = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '>': '>',
  '<=': '<=',
  '>=': '>=',
};

/**
 * Deepest expression nesting accepted (parentheses, NOT, unary minus, function arguments,
 * subqueries, arrays each count one level); deeper input is a syntax error, not a stack overflow.
 */
export const MAX_DEPTH = 256;

/**
 * A chain of one associative operator (`OR`, `AND`, `||`, `+`) longer than this is built as a
 * balanced tree of left-deep runs of at most this many operands, so the tree's depth grows with
 * the logarithm of its length: 10,000 OR terms nest about 20 deep, not 10,000 (every pass over the
 * AST recurses). Shorter chains keep the usual left-deep shape.
 */
export const CHAIN_RUN = 16;

interface ChainItem {
  readonly expr: Expr;
  readonly span: Span;
}

/** `items` joined by `op`: left-deep up to CHAIN_RUN operands, balanced above. */
function chainTree(op: BinaryOp, items: readonly ChainItem[], lo = 0, hi = items.length): Expr {
  const n = hi - lo;
  if (n > CHAIN_RUN) {
    const mid = lo + Math.ceil(n / 2);
    const left = chainTree(op, items, lo, mid);
    const right = chainTree(op, items, mid, hi);
    return { kind: 'Binary', op, left, right, span: spanOf(items, lo, hi) };
  }
  let left = (items[lo] as ChainItem).expr;
  for (let i = lo + 1; i < hi; i++) {
    const right = (items[i] as ChainItem).expr;
    left = { kind: 'Binary', op, left, right, span: spanOf(items, lo, i + 1) };
  }
  return left;
}

function spanOf(items: readonly ChainItem[], lo: number, hi: number): Span {
  return { start: (items[lo] as ChainItem).span.start, end: (items[hi - 1] as ChainItem).span.end };
}

/**
 * Expressions by precedence climbing, ClickHouse precedence from lowest to highest:
 * lambda `->`, ternary `?:`, OR, AND, NOT, IS [NOT] NULL, [NOT] BETWEEN, comparison / LIKE / IN,
 * `||`, `+ -`, `* / % DIV MOD`, unary `-`, postfix (`[i]`, `.1`, `::type`, `:json.path`), primary.
 */
export abstract class ExpressionParser extends PrimaryParser {
  /** Nesting depth of expressions being parsed (bounded, like ClickHouse's max_parser_depth). */
  private depth = 0;

  // --- entry points ---

  expression(opts: ExprOptions = {}): Expr {
    return this.nested(() => this.tryLambda() ?? this.ternary(opts));
  }

  /** Run `parse` one nesting level deeper; too deep is a syntax error rather than a stack overflow. */
  protected nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH)
      this.fail(`Maximum parse depth (${MAX_DEPTH}) exceeded: the query nests too deeply`);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  // --- precedence levels ---

  private tryLambda(): Expr | undefined {
    const t = this.token;
    const start = t.start;
    if (
      (t.type === 'ident' || t.type === 'quoted') &&
      this.peek().type === 'op' &&
      this.peek().value === '->'
    ) {
      this.pos += 2;
      const body = this.expression();
      return { kind: 'Lambda', params: [t.value], body, span: this.spanFrom(start) };
    }
    if (t.type === 'op' && t.value === '(') {
      // (a, b, ...) -> body
      let i = 1;
      const params: string[] = [];
      for (;;) {
        const p = this.peek(i);
        if (p.type !== 'ident' && p.type !== 'quoted') return undefined;
        params.push(p.value);
        const sep = this.peek(i + 1);
        if (sep.type === 'op' && sep.value === ',') {
          i += 2;
          continue;
        }
        if (sep.type === 'op' && sep.value === ')') break;
        return undefined;
      }
      const arrow = this.peek(i + 2);
      if (arrow.type !== 'op' || arrow.value !== '->') return undefined;
      this.pos += i + 3;
      const body = this.expression();
      return { kind: 'Lambda', params, body, span: this.spanFrom(start) };
    }
    return undefined;
  }

  private ternary(opts: ExprOptions): Expr {
    const start = this.token.start;
    const condition = this.or(opts);
    if (!this.acceptOp('?')) return condition;
    const whenTrue = this.expression();
    this.expectOp(':');
    const whenFalse = this.expression();
    return { kind: 'Ternary', condition, whenTrue, whenFalse, span: this.spanFrom(start) };
  }

  /** Operands separated by `more()`, each parsed by `operand`, with the span of the chain so far. */
  private chainItems(operand: () => Expr, more: () => boolean): ChainItem[] {
    const start = this.token.start;
    const items: ChainItem[] = [{ expr: operand(), span: this.spanFrom(start) }];
    while (more()) items.push({ expr: operand(), span: this.spanFrom(start) });
    // Each item's span starts where the chain starts (as the left-deep nodes' spans always did).
    return items.map((it, i) =>
      i === 0 ? it : { expr: it.expr, span: { start: it.expr.span.start, end: it.span.end } },
    );
  }

  private or(opts: ExprOptions): Expr {
    return this.chain(
      'OR',
      () => this.and(opts),
      () => this.acceptKeyword('OR'),
    );
  }

  private and(opts: ExprOptions): Expr {
    return this.chain(
      'AND',
      () => this.not(opts),
      () => this.acceptKeyword('AND'),
    );
  }

  private chain(op: BinaryOp, operand: () => Expr, more: () => boolean): Expr {
    const items = this.chainItems(operand, more);
    return items.length === 1 ? (items[0] as ChainItem).expr : chainTree(op, items);
  }

  private not(opts: ExprOptions): Expr {
    const start = this.token.start;
    // `NOT x` and `NOT(x)` alike: the unary operator (lower precedence than comparison).
    if (TokenCursor.isWord(this.token, 'NOT')) {
      this.pos++;
      const operand = this.nested(() => this.not(opts));
      return { kind: 'Unary', op: 'NOT', operand, span: this.spanFrom(start) };
    }
    return this.isNull(opts);
  }

  private isNull(opts: ExprOptions): Expr {
    const start = this.token.start;
    let expr = this.between(opts);
    while (this.isKeyword('IS')) {
      const save = this.pos;
      this.pos++;
      const not = this.acceptKeyword('NOT');
      if (!this.acceptKeyword('NULL')) {
        this.pos = save;
        break;
      }
      expr = { kind: 'IsNull', expr, not, span: this.spanFrom(start) };
    }
    return expr;
  }

  private between(opts: ExprOptions): Expr {
    const start = this.token.start;
    const expr = this.comparison(opts);
    let not = false;
    if (this.isKeyword('NOT BETWEEN')) {
      this.pos += 2;
      not = true;
    } else if (this.acceptKeyword('BETWEEN')) {
      not = false;
    } else return expr;
    const low = this.comparison(opts);
    this.expectKeyword('AND');
    const high = this.comparison(opts);
    return { kind: 'Between', expr, low, high, not, span: this.spanFrom(start) };
  }

  private comparisonOp(): BinaryOp | undefined {
    const t = this.token;
    if (t.type === 'op') {
      const op = COMPARISON_OPS[t.value];
      if (op) {
        this.pos++;
        return op;
      }
      this.expect('operator');
      return undefined;
    }
    for (const [words, op] of [
      ['LIKE', 'LIKE'],
      ['ILIKE', 'ILIKE'],
      ['NOT LIKE', 'NOT LIKE'],
      ['NOT ILIKE', 'NOT ILIKE'],
      ['IN', 'IN'],
      ['NOT IN', 'NOT IN'],
      ['GLOBAL IN', 'GLOBAL IN'],
      ['GLOBAL NOT IN', 'GLOBAL NOT IN'],
    ] as const) {
      if (this.acceptKeyword(words)) return op;
    }
    return undefined;
  }

  private comparison(opts: ExprOptions): Expr {
    const start = this.token.start;
    let left = this.concat(opts);
    for (;;) {
      const op = this.comparisonOp();
      if (!op) return left;
      const right = this.concat(opts);
      left = { kind: 'Binary', op, left, right, span: this.spanFrom(start) };
    }
  }

  private concat(opts: ExprOptions): Expr {
    return this.chain(
      '||',
      () => this.additive(opts),
      () => this.acceptOp('||'),
    );
  }

  private additive(opts: ExprOptions): Expr {
    const start = this.token.start;
    const ops: ('+' | '-')[] = [];
    const items = this.chainItems(
      () => this.multiplicative(opts),
      () => {
        const op = this.acceptOp('+') ? '+' : this.acceptOp('-') ? '-' : undefined;
        if (op) ops.push(op);
        return op !== undefined;
      },
    );
    // A chain of `+` only is associative and may be balanced; with `-` it stays left-deep.
    if (ops.every((op) => op === '+'))
      return items.length === 1 ? (items[0] as ChainItem).expr : chainTree('+', items);
    let left = (items[0] as ChainItem).expr;
    ops.forEach((op, i) => {
      const right = (items[i + 1] as ChainItem).expr;
      left = { kind: 'Binary', op, left, right, span: { start, end: (items[i + 1] as ChainItem).span.end } };
    });
    return left;
  }

  private multiplicative(opts: ExprOptions): Expr {
    const start = this.token.start;
    let left = this.unary(opts);
    for (;;) {
      let op: BinaryOp | undefined;
      if (this.acceptOp('*')) op = '*';
      else if (this.acceptOp('/')) op = '/';
      else if (this.acceptOp('%') || this.acceptKeyword('MOD')) op = '%';
      else if (this.acceptKeyword('DIV')) op = 'DIV';
      if (!op) return left;
      const right = this.unary(opts);
      left = { kind: 'Binary', op, left, right, span: this.spanFrom(start) };
    }
  }

  /** Unary minus (and plus); a sign directly before an interval shorthand is folded into it. */
  unary(opts: ExprOptions = {}): Expr {
    const t = this.token;
    if (t.type === 'op' && (t.value === '-' || t.value === '+')) {
      const next = this.peek();
      if (next.type === 'interval' && !next.spaceBefore) {
        this.pos++;
        const iv = this.intervalShorthand(t.value === '-' ? '-' : '');
        return this.postfixOps({ ...iv, span: { start: t.start, end: iv.span.end } }, t.start, opts);
      }
      this.pos++;
      const operand = this.nested(() => this.unary(opts));
      if (t.value === '+') return operand;
      return { kind: 'Unary', op: '-', operand, span: this.spanFrom(t.start) };
    }
    return this.postfix(opts);
  }

  private postfix(opts: ExprOptions): Expr {
    const start = this.token.start;
    return this.postfixOps(this.primary(), start, opts);
  }

  /** Subscripts, `::type` casts, `.1` tuple elements and `:path` JSON access after an operand. */
  private postfixOps(operand: Expr, start: number, opts: ExprOptions): Expr {
    let expr = operand;
    for (;;) {
      const t = this.token;
      if (t.type !== 'op') return expr;
      if (t.value === '[') {
        this.pos++;
        const index = this.expression();
        this.expectOp(']');
        expr = { kind: 'Subscript', object: expr, index, span: this.spanFrom(start) };
      } else if (t.value === '::') {
        this.pos++;
        const type = this.dataType();
        expr = { kind: 'Cast', expr, type, syntax: 'colons', span: this.spanFrom(start) };
      } else if (t.value === '.' && this.peek().type === 'number' && /^\d+$/.test(this.peek().value)) {
        this.pos++;
        const index = Number(this.advance().value);
        expr = { kind: 'TupleElement', object: expr, index, span: this.spanFrom(start) };
      } else if (
        t.value === ':' &&
        !opts.noJson &&
        !t.spaceBefore &&
        (expr.kind === 'Identifier' || expr.kind === 'JsonAccess') &&
        (this.peek().type === 'ident' ||
          this.peek().type === 'quoted' ||
          (this.peek().type === 'op' && this.peek().value === '[')) &&
        !this.peek().spaceBefore
      ) {
        this.pos++;
        expr = { kind: 'JsonAccess', object: expr, path: this.jsonPath(), span: this.spanFrom(start) };
      } else {
        return expr;
      }
    }
  }

  /** The path after `col:` — `a.b`, `a[0].b`, `b[*]`, `[0]` — as written, without spaces. */
  private jsonPath(): string {
    const start = this.token.start;
    let end = this.token.end;
    if (!(this.token.type === 'op' && this.token.value === '[')) this.pos++;
    for (;;) {
      const t = this.token;
      if (t.spaceBefore || t.type !== 'op') break;
      if (
        t.value === '.' &&
        !this.peek().spaceBefore &&
        ['ident', 'quoted', 'number'].includes(this.peek().type)
      ) {
        this.pos += 2;
        end = this.previous.end;
      } else if (t.value === '[') {
        let depth = 0;
        let i = this.pos;
        for (; i < this.tokens.length; i++) {
          const x = this.tokens[i] as Token;
          if (x.type === 'op' && x.value === '[') depth++;
          else if (x.type === 'op' && x.value === ']' && --depth === 0) break;
          else if (x.type === 'eof') this.fail();
        }
        this.pos = i + 1;
        end = this.previous.end;
      } else break;
    }
    return this.source.slice(start, end);
  }

  /** ORDER BY items: `expr [ASC|DESC] [NULLS FIRST|LAST] [COLLATE 'x'] [WITH FILL [FROM a] [TO b] [STEP c]]`. */
  orderList(): OrderItem[] {
    const items: OrderItem[] = [];
    do {
      const start = this.token.start;
      const expr = this.expressionWithAlias();
      const d = this.acceptAnyKeyword('ASC', 'ASCENDING', 'DESC', 'DESCENDING');
      const direction =
        d === undefined ? undefined : d.startsWith('ASC') ? ('ASC' as const) : ('DESC' as const);
      let nulls: 'FIRST' | 'LAST' | undefined;
      if (this.acceptKeyword('NULLS')) {
        nulls = this.acceptAnyKeyword('FIRST', 'LAST');
        if (!nulls) this.fail();
      }
      const collate = this.acceptKeyword('COLLATE') ? this.stringLiteral() : undefined;
      let fill: OrderItem['fill'];
      if (this.acceptKeyword('WITH FILL')) {
        const from = this.acceptKeyword('FROM') ? this.expression() : undefined;
        const to = this.acceptKeyword('TO') ? this.expression() : undefined;
        const step = this.acceptKeyword('STEP') ? this.expression() : undefined;
        fill = { ...(from ? { from } : {}), ...(to ? { to } : {}), ...(step ? { step } : {}) };
      }
      items.push({
        kind: 'OrderItem',
        expr,
        ...(direction ? { direction } : {}),
        ...(nulls ? { nulls } : {}),
        ...(collate !== undefined ? { collate } : {}),
        ...(fill ? { fill } : {}),
        span: this.spanFrom(start),
      });
    } while (this.acceptOp(','));
    return items;
  }

  /** `k = v, k2 = v2` (after SETTINGS). */
  settingsList(): Setting[] {
    const settings: Setting[] = [];
    do {
      const start = this.token.start;
      const name = this.name('setting name');
      this.expectOp('=');
      const value = this.expression();
      settings.push({ kind: 'Setting', name, value, span: this.spanFrom(start) });
      // Continue only with another `name =`: in ALTER, a comma may start the next command.
    } while (
      this.isOp(',') &&
      (this.peek().type === 'ident' || this.peek().type === 'quoted') &&
      this.peek(2).type === 'op' &&
      this.peek(2).value === '=' &&
      this.acceptOp(',')
    );
    return settings;
  }
}
