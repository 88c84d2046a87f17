import type { Expr } from '../ast/expression.ts';
import type {
  EmitClause,
  FromItem,
  GroupBy,
  Query,
  SelectQuery,
  UnionQuery,
  WithItem,
} from '../ast/query.ts';
import { ExpressionPrinter, PREC } from './print-expression.ts';
import { type Layout, quoteIdentifier } from './sql-text.ts';

/**
 * Prints queries. Pretty layout puts each clause keyword on its own line with the clause body
 * indented under it (the layout Proton's own formatter uses); one-line layout joins with spaces.
 */
export class QueryPrinter extends ExpressionPrinter {
  query(q: Query, layout: Layout): string {
    return q.kind === 'Union' ? this.union(q, layout) : this.select(q, layout);
  }

  protected union(u: UnionQuery, layout: Layout): string {
    let out = '';
    u.queries.forEach((q, i) => {
      // A nested union, or a member with its own FORMAT, needs parentheses to read back the same.
      const text =
        q.kind === 'Union'
          ? `(${layout.brOpen}${this.union(q, layout.inner)}${layout.brClose})`
          : this.select(q, layout);
      out += i === 0 ? text : `${layout.br}${u.ops[i - 1]}${layout.br}${text}`;
    });
    if (u.format !== undefined) out += `${layout.br}FORMAT ${quoteIdentifier(u.format)}`;
    return out;
  }

  /** The clauses of a SELECT, in order, each as [keyword line, body?]. */
  protected selectClauses(q: SelectQuery, layout: Layout): [string, string?][] {
    const inner = layout.inner;
    const c: [string, string?][] = [];
    if (q.with) c.push(['WITH', q.with.map((w) => this.withItem(w, inner)).join(', ')]);
    let head = 'SELECT';
    if (q.distinct) head += ' DISTINCT';
    if (q.distinctOn) head += ` DISTINCT ON (${this.list(q.distinctOn, inner)})`;
    if (q.top) head += ` TOP ${this.expr(q.top, PREC.unary, inner)}`;
    c.push([head, this.selectList(q, inner)]);
    if (q.from) c.push(...this.fromClauses(q.from, layout));
    if (q.prewhere) c.push(['PREWHERE', this.expr(q.prewhere, PREC.lambda, inner)]);
    if (q.where) c.push(['WHERE', this.expr(q.where, PREC.lambda, inner)]);
    if (q.partitionBy) c.push(['PARTITION BY', this.list(q.partitionBy, inner)]);
    if (q.shuffleBy) c.push(['SHUFFLE BY', this.list(q.shuffleBy, inner)]);
    if (q.groupBy) c.push(...this.groupBy(q.groupBy, inner));
    if (q.having) c.push(['HAVING', this.expr(q.having, PREC.lambda, inner)]);
    if (q.windows) {
      c.push([
        'WINDOW',
        q.windows.map((w) => `${quoteIdentifier(w.name)} AS ${this.windowSpec(w.spec, inner)}`).join(', '),
      ]);
    }
    if (q.orderBy) c.push(['ORDER BY', this.orderItems(q.orderBy, inner)]);
    if (q.limitBy) {
      const off = q.limitBy.offset ? ` OFFSET ${this.expr(q.limitBy.offset, PREC.lambda, inner)}` : '';
      c.push([
        `LIMIT ${this.expr(q.limitBy.limit, PREC.lambda, inner)}${off} BY ${this.list(q.limitBy.by, inner)}`,
      ]);
    }
    if (q.limit) {
      const off = q.limit.offset ? ` OFFSET ${this.expr(q.limit.offset, PREC.lambda, inner)}` : '';
      c.push([
        `LIMIT ${this.expr(q.limit.limit, PREC.lambda, inner)}${off}${q.limit.withTies ? ' WITH TIES' : ''}`,
      ]);
    }
    if (q.emit) c.push([this.emit(q.emit, inner)]);
    if (q.settings?.length) c.push([`SETTINGS ${this.settings(q.settings, inner)}`]);
    if (q.format !== undefined) c.push([`FORMAT ${quoteIdentifier(q.format)}`]);
    return c;
  }

  protected selectList(q: SelectQuery, layout: Layout): string {
    return this.list(q.columns, layout);
  }

  protected select(q: SelectQuery, layout: Layout): string {
    return this.selectClauses(q, layout)
      .map(
        ([head, body], i) =>
          (i === 0 ? '' : layout.br) + head + (body === undefined ? '' : layout.brIn + body),
      )
      .join('');
  }

  protected withItem(w: WithItem, layout: Layout): string {
    if (w.kind === 'Cte')
      return `${quoteIdentifier(w.name)} AS (${layout.brOpen}${this.query(w.query, layout.inner)}${layout.brClose})`;
    return `${this.expr(w.expr, PREC.lambda, layout)} AS ${quoteIdentifier(w.name)}`;
  }

  protected groupBy(g: GroupBy, layout: Layout): [string, string?][] {
    const out: [string, string?][] = [];
    if (g.items.length || g.groupingSets) {
      if (g.groupingSets) out.push(['GROUP BY GROUPING SETS', `(${this.list(g.items, layout)})`]);
      else out.push(['GROUP BY', this.list(g.items, layout)]);
    }
    if (g.modifier) out.push([`WITH ${g.modifier}`]);
    if (g.withTotals) out.push(['WITH TOTALS']);
    return out;
  }

  /** EMIT in canonical order: mode, AFTER WATERMARK [WITH DELAY], PERIODIC, ON UPDATE, then AND-chained TIMEOUT / LAST. */
  emit(e: EmitClause, layout: Layout): string {
    const parts: string[] = [];
    const iv = (x: Expr) => this.expr(x, PREC.unary, layout);
    if (e.afterWatermark) {
      let s = e.windowClose ? 'AFTER WINDOW CLOSE' : 'AFTER WATERMARK';
      if (e.delay) s += ` WITH DELAY ${iv(e.delay)}`;
      parts.push(s);
    } else if (e.delay) parts.push(`DELAY ${iv(e.delay)}`);
    if (e.periodic) parts.push(`PERIODIC ${iv(e.periodic)}${e.repeat ? ' REPEAT' : ''}`);
    if (e.onUpdate) parts.push(`ON UPDATE${e.onUpdateBatch ? ` WITH BATCH ${iv(e.onUpdateBatch)}` : ''}`);
    if (e.timeout) parts.push(`TIMEOUT ${iv(e.timeout)}`);
    if (e.last) parts.push(`LAST ${iv(e.last)}${e.lastOnProctime ? ' ON PROCTIME' : ''}`);
    return ['EMIT', ...(e.mode ? [e.mode] : []), parts.join(' AND ')].filter((s) => s !== '').join(' ');
  }

  // --- FROM ---

  /** FROM as clause lines: `FROM` + first item, then one line per join. */
  protected fromClauses(from: FromItem, layout: Layout): [string, string?][] {
    const chain: FromItem[] = [];
    let cur = from;
    while ((cur.kind === 'Join' && cur.joinKind !== 'COMMA') || cur.kind === 'ArrayJoin') {
      chain.unshift(cur);
      cur = cur.left;
    }
    const inner = layout.inner;
    const lines: [string, string?][] = [['FROM', this.fromItem(cur, inner)]];
    for (const j of chain) {
      if (j.kind === 'ArrayJoin') {
        lines.push([`${j.leftArrayJoin ? 'LEFT ARRAY JOIN' : 'ARRAY JOIN'} ${this.list(j.exprs, inner)}`]);
        continue;
      }
      if (j.kind !== 'Join') continue;
      lines.push([
        `${this.joinHead(j)} ${this.joinRight(j.right, layout, j)}${this.joinCondition(j, layout)}`,
      ]);
    }
    return lines;
  }

  protected joinHead(j: FromItem & { kind: 'Join' }): string {
    const words: string[] = [];
    if (j.global) words.push('GLOBAL');
    words.push(j.joinKind);
    if (j.strictness) words.push(j.strictness);
    words.push('JOIN');
    return words.join(' ');
  }

  protected joinCondition(j: FromItem & { kind: 'Join' }, layout: Layout): string {
    if (j.on) return ` ON ${this.expr(j.on, PREC.lambda, layout.inner)}`;
    if (j.using) return ` USING (${j.using.map((u) => this.identifier(u)).join(', ')})`;
    return '';
  }

  /** The right side of a join (`join` is the join it belongs to): a nested join needs parentheses. */
  protected joinRight(item: FromItem, layout: Layout, _join?: FromItem & { kind: 'Join' }): string {
    const text = this.fromItem(item, layout.inner);
    return item.kind === 'Join' || item.kind === 'ArrayJoin' ? `(${text})` : text;
  }

  /** One FROM item on one line (joins inside it, e.g. comma lists, inline). */
  fromItem(item: FromItem, layout: Layout): string {
    switch (item.kind) {
      case 'Table':
        return `${item.database !== undefined ? `${quoteIdentifier(item.database)}.` : ''}${quoteIdentifier(item.name)}${item.final ? ' FINAL' : ''}${this.tableAlias(item.alias)}`;
      case 'TableFunction':
        return `${quoteIdentifier(item.name)}(${this.list(item.args, layout)})${this.tableAlias(item.alias)}`;
      case 'SubqueryTable':
        return `(${layout.brOpen}${this.query(item.query, layout.inner)}${layout.brClose})${this.tableAlias(item.alias)}`;
      case 'Join': {
        if (item.joinKind === 'COMMA')
          return `${this.fromItem(item.left, layout)}, ${this.joinRight(item.right, layout)}`;
        return `${this.fromItem(item.left, layout)} ${this.joinHead(item)} ${this.joinRight(item.right, layout, item)}${this.joinCondition(item, layout)}`;
      }
      case 'ArrayJoin':
        return `${this.fromItem(item.left, layout)} ${item.leftArrayJoin ? 'LEFT ARRAY JOIN' : 'ARRAY JOIN'} ${this.list(item.exprs, layout)}`;
    }
  }

  protected tableAlias(alias: string | undefined): string {
    return alias === undefined ? '' : ` AS ${quoteIdentifier(alias)}`;
  }
}
