import type {
  AliasExpr,
  BinaryOp,
  Expr,
  FrameBound,
  FunctionCall,
  Identifier,
  IntervalExpr,
  JsonAccess,
  OrderItem,
  Setting,
  SubscriptExpr,
  WindowSpec,
} from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import { type DataType, printDataType } from '../types/data-type.ts';
import { Layout, quoteIdentifier, quoteString } from './sql-text.ts';

/**
 * Binding strength of each expression form, mirroring the parser's precedence levels. An operand
 * whose strength is below what its position needs is printed in parentheses.
 */
export const PREC = {
  alias: -1,
  lambda: 0,
  ternary: 1,
  or: 2,
  and: 3,
  not: 4,
  isNull: 5,
  between: 6,
  comparison: 7,
  concat: 8,
  additive: 9,
  multiplicative: 10,
  unary: 11,
  postfix: 12,
  primary: 13,
} as const;

export function binaryPrec(op: BinaryOp): number {
  switch (op) {
    case 'OR':
      return PREC.or;
    case 'AND':
      return PREC.and;
    case '||':
      return PREC.concat;
    case '+':
    case '-':
      return PREC.additive;
    case '*':
    case '/':
    case '%':
    case 'DIV':
      return PREC.multiplicative;
    default:
      return PREC.comparison;
  }
}

export function precedenceOf(e: Expr): number {
  switch (e.kind) {
    case 'Alias':
      return PREC.alias;
    case 'Lambda':
      return PREC.lambda;
    case 'Ternary':
      return PREC.ternary;
    case 'Binary':
      return binaryPrec(e.op);
    case 'Unary':
      return e.op === 'NOT' ? PREC.not : PREC.unary;
    case 'IsNull':
      return PREC.isNull;
    case 'Between':
      return PREC.between;
    case 'Subscript':
    case 'TupleElement':
    case 'JsonAccess':
      return PREC.postfix;
    case 'Cast':
      return e.syntax === 'colons' ? PREC.postfix : PREC.primary;
    case 'Interval':
      // `-10s` binds like a unary minus.
      return e.shorthand && e.value.kind === 'Number' && e.value.text.startsWith('-')
        ? PREC.unary
        : PREC.primary;
    default:
      return PREC.primary;
  }
}

/**
 * Prints expressions. Subclasses override the hooks (`functionCall`, `dataType`, `interval`,
 * `jsonAccess`, `identifier`, ...) to print another dialect: the ClickHouse translator does.
 */
export abstract class ExpressionPrinter {
  abstract query(q: Query, layout: Layout): string;

  /** Print `e` in a position that needs at least binding strength `min`. */
  expr(e: Expr, min: number = PREC.lambda, layout: Layout = new Layout(false)): string {
    const text = this.exprText(e, layout);
    return precedenceOf(e) < min ? `(${text})` : text;
  }

  /** An item of a comma list, where `AS alias` may appear. */
  item(e: Expr, layout: Layout = new Layout(false)): string {
    return this.expr(e, PREC.alias, layout);
  }

  list(items: readonly Expr[], layout: Layout = new Layout(false)): string {
    return items.map((e) => this.item(e, layout)).join(', ');
  }

  protected exprText(e: Expr, layout: Layout): string {
    switch (e.kind) {
      case 'Number':
        return e.text;
      case 'String':
        return quoteString(e.value);
      case 'Null':
        return 'NULL';
      case 'Bool':
        return e.value ? 'true' : 'false';
      case 'Array':
        return `[${this.list(e.elements, layout)}]`;
      case 'Tuple':
        return e.elements.length === 1
          ? `(${this.item(e.elements[0] as Expr, layout)},)`
          : `(${this.list(e.elements, layout)})`;
      case 'Map':
        return `{${e.entries.map((x) => `${this.expr(x.key, PREC.lambda, layout)}: ${this.expr(x.value, PREC.lambda, layout)}`).join(', ')}}`;
      case 'Range':
        return `${e.startInclusive ? '[' : '('}${this.expr(e.start, PREC.lambda, layout)}, ${this.expr(e.end, PREC.lambda, layout)}${e.endInclusive ? ']' : ')'}`;
      case 'Interval':
        return this.interval(e, layout);
      case 'Identifier':
        return this.identifier(e);
      case 'Asterisk':
        return `${e.qualifier ? `${e.qualifier.map(quoteIdentifier).join('.')}.` : ''}*${this.except(e.except)}`;
      case 'Columns': {
        const q = e.qualifier ? `${e.qualifier.map(quoteIdentifier).join('.')}.` : '';
        const inner =
          e.pattern !== undefined
            ? quoteString(e.pattern)
            : (e.columns ?? []).map((c) => this.identifier(c)).join(', ');
        return `${q}COLUMNS(${inner})${this.except(e.except)}`;
      }
      case 'Function':
        return this.functionCall(e, layout);
      case 'Lambda': {
        const params =
          e.params.length === 1
            ? quoteIdentifier(e.params[0] as string)
            : `(${e.params.map(quoteIdentifier).join(', ')})`;
        return `${params} -> ${this.expr(e.body, PREC.lambda, layout)}`;
      }
      case 'Unary': {
        if (e.op === 'NOT') return `NOT ${this.expr(e.operand, PREC.not, layout)}`;
        const operand = this.expr(e.operand, PREC.unary, layout);
        return operand.startsWith('-') ? `- ${operand}` : `-${operand}`;
      }
      case 'Binary': {
        const p = binaryPrec(e.op);
        return `${this.expr(e.left, p, layout)} ${e.op} ${this.expr(e.right, p + 1, layout)}`;
      }
      case 'Between':
        return `${this.expr(e.expr, PREC.comparison, layout)} ${e.not ? 'NOT BETWEEN' : 'BETWEEN'} ${this.expr(e.low, PREC.comparison, layout)} AND ${this.expr(e.high, PREC.comparison, layout)}`;
      case 'IsNull':
        return `${this.expr(e.expr, PREC.isNull, layout)} ${e.not ? 'IS NOT NULL' : 'IS NULL'}`;
      case 'Case': {
        const parts = ['CASE'];
        if (e.operand) parts.push(this.expr(e.operand, PREC.lambda, layout));
        for (const w of e.whens)
          parts.push(
            `WHEN ${this.expr(w.when, PREC.lambda, layout)} THEN ${this.expr(w.result, PREC.lambda, layout)}`,
          );
        if (e.else) parts.push(`ELSE ${this.expr(e.else, PREC.lambda, layout)}`);
        parts.push('END');
        return parts.join(' ');
      }
      case 'Cast':
        return e.syntax === 'cast'
          ? `CAST(${this.expr(e.expr, PREC.lambda, layout)} AS ${this.dataType(e.type)})`
          : `${this.expr(e.expr, PREC.postfix, layout)}::${this.dataType(e.type)}`;
      case 'JsonAccess':
        return this.jsonAccess(e, layout);
      case 'Subscript':
        return this.subscript(e, layout);
      case 'TupleElement':
        return `${this.expr(e.object, PREC.postfix, layout)}.${e.index}`;
      case 'Ternary':
        return `${this.expr(e.condition, PREC.or, layout)} ? ${this.expr(e.whenTrue, PREC.lambda, layout)} : ${this.expr(e.whenFalse, PREC.lambda, layout)}`;
      case 'Subquery':
        return `(${layout.brOpen}${this.query(e.query, layout.inner)}${layout.brClose})`;
      case 'Alias':
        return this.alias(e, layout);
    }
  }

  protected except(names: readonly string[] | undefined): string {
    if (!names) return '';
    return ` EXCEPT (${names.map((n) => n.split('.').map(quoteIdentifier).join('.')).join(', ')})`;
  }

  protected alias(e: AliasExpr, layout: Layout): string {
    return `${this.expr(e.expr, PREC.lambda, layout)} AS ${quoteIdentifier(e.alias)}`;
  }

  identifier(e: Identifier): string {
    return e.parts.map(quoteIdentifier).join('.');
  }

  /** Proton form: shorthand `5s` when written so, else `INTERVAL 5 SECOND`. */
  protected interval(e: IntervalExpr, layout: Layout): string {
    if (e.shorthand && e.value.kind === 'Number') {
      const suffix = SHORTHAND_SUFFIX[e.unit];
      return `${e.value.text}${suffix}`;
    }
    return `INTERVAL ${this.expr(e.value, PREC.unary, layout)} ${e.unit}`;
  }

  protected subscript(e: SubscriptExpr, layout: Layout): string {
    return `${this.expr(e.object, PREC.postfix, layout)}[${this.expr(e.index, PREC.lambda, layout)}]`;
  }

  protected jsonAccess(e: JsonAccess, layout: Layout): string {
    return `${this.expr(e.object, PREC.postfix, layout)}:${e.path}`;
  }

  dataType(t: DataType): string {
    return printDataType(t);
  }

  protected functionName(f: FunctionCall): string {
    return /^[A-Za-z_][A-Za-z0-9_]*$/.test(f.name) ? f.name : quoteIdentifier(f.name);
  }

  protected functionCall(f: FunctionCall, layout: Layout): string {
    const args = `${f.distinct ? 'DISTINCT ' : ''}${this.list(f.args, layout)}`;
    const head = f.params
      ? `${this.functionName(f)}(${this.list(f.params, layout)})(${args})`
      : `${this.functionName(f)}(${args})`;
    return head + this.callSuffix(f, layout);
  }

  /** `FILTER (WHERE ..)` and `OVER ..` after a call. */
  protected callSuffix(f: FunctionCall, layout: Layout): string {
    let out = '';
    if (f.filter) out += ` FILTER (WHERE ${this.expr(f.filter, PREC.lambda, layout)})`;
    if (f.over !== undefined)
      out += ` OVER ${typeof f.over === 'string' ? quoteIdentifier(f.over) : this.windowSpec(f.over, layout)}`;
    return out;
  }

  windowSpec(w: WindowSpec, layout: Layout): string {
    const parts: string[] = [];
    if (w.base) parts.push(quoteIdentifier(w.base));
    if (w.partitionBy.length) parts.push(`PARTITION BY ${this.list(w.partitionBy, layout)}`);
    if (w.orderBy.length) parts.push(`ORDER BY ${this.orderItems(w.orderBy, layout)}`);
    if (w.frame) {
      const b = (x: FrameBound) =>
        'offset' in x ? `${this.expr(x.offset, PREC.unary, layout)} ${x.kind}` : x.kind;
      parts.push(
        w.frame.end
          ? `${w.frame.units} BETWEEN ${b(w.frame.start)} AND ${b(w.frame.end)}`
          : `${w.frame.units} ${b(w.frame.start)}`,
      );
    }
    return `(${parts.join(' ')})`;
  }

  orderItems(items: readonly OrderItem[], layout: Layout): string {
    return items
      .map((o) => {
        let s = this.item(o.expr, layout);
        if (o.direction) s += ` ${o.direction}`;
        if (o.nulls) s += ` NULLS ${o.nulls}`;
        if (o.collate !== undefined) s += ` COLLATE ${quoteString(o.collate)}`;
        if (o.fill) {
          s += ' WITH FILL';
          if (o.fill.from) s += ` FROM ${this.expr(o.fill.from, PREC.lambda, layout)}`;
          if (o.fill.to) s += ` TO ${this.expr(o.fill.to, PREC.lambda, layout)}`;
          if (o.fill.step) s += ` STEP ${this.expr(o.fill.step, PREC.lambda, layout)}`;
        }
        return s;
      })
      .join(', ');
  }

  settings(settings: readonly Setting[], layout: Layout): string {
    return settings
      .map((s) => `${quoteIdentifier(s.name)} = ${this.expr(s.value, PREC.lambda, layout)}`)
      .join(', ');
  }
}

export const SHORTHAND_SUFFIX: Record<IntervalExpr['unit'], string> = {
  NANOSECOND: 'ns',
  MICROSECOND: 'us',
  MILLISECOND: 'ms',
  SECOND: 's',
  MINUTE: 'm',
  HOUR: 'h',
  DAY: 'd',
  WEEK: 'w',
  MONTH: 'M',
  QUARTER: 'q',
  YEAR: 'y',
};
