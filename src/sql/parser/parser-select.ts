import type { Expr, Identifier, Setting } from '../ast/expression.ts';
import type {
  EmitClause,
  FromItem,
  GroupBy,
  JoinKind,
  JoinStrictness,
  Limit,
  LimitBy,
  NamedWindow,
  Query,
  SelectQuery,
  UnionQuery,
  WithItem,
} from '../ast/query.ts';
import { canBeBareAlias, NON_EXPRESSION_WORDS } from '../syntax/keywords.ts';
import { ExpressionParser } from './parser-expression.ts';
import { TokenCursor } from './token-cursor.ts';

const JOIN_KINDS = ['INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS'] as const;
const JOIN_STRICTNESS = ['ALL', 'ANY', 'ASOF', 'LATEST', 'SEMI', 'ANTI'] as const;

/** SELECT queries: WITH, UNION, FROM (tables, table functions, joins), every clause, EMIT. */
export abstract class QueryParser extends ExpressionParser {
  /** `select [UNION [ALL|DISTINCT] select]* [FORMAT name]` */
  query(): Query {
    return this.nested(() => this.unionChain());
  }

  private unionChain(): Query {
    const start = this.token.start;
    const first = this.queryTerm();
    const queries: Query[] = [first];
    const ops: UnionQuery['ops'][number][] = [];
    while (this.acceptKeyword('UNION')) {
      const mode = this.acceptAnyKeyword('ALL', 'DISTINCT');
      ops.push(mode ? `UNION ${mode}` : 'UNION');
      queries.push(this.queryTerm());
    }
    const format = this.acceptKeyword('FORMAT') ? this.name('format name') : undefined;
    if (queries.length === 1) {
      if (format === undefined) return first;
      return { ...first, format, span: this.spanFrom(start) };
    }
    return {
      kind: 'Union',
      queries,
      ops,
      ...(format !== undefined ? { format } : {}),
      span: this.spanFrom(start),
    };
  }

  /** A SELECT, or a parenthesised query. */
  private queryTerm(): Query {
    if (this.acceptOp('(')) {
      const inner = this.query();
      this.expectOp(')');
      return inner;
    }
    return this.select();
  }

  select(): SelectQuery {
    const start = this.token.start;
    const withItems = this.acceptKeyword('WITH') ? this.withList() : undefined;
    this.expectKeyword('SELECT');
    let distinct = false;
    let distinctOn: Expr[] | undefined;
    if (this.acceptKeyword('DISTINCT ON')) {
      this.expectOp('(');
      distinctOn = this.expressionList();
      this.expectOp(')');
    } else if (this.acceptKeyword('DISTINCT')) distinct = true;
    else this.acceptKeyword('ALL');
    let top: Expr | undefined;
    if (this.acceptKeyword('TOP')) top = this.unary();
    const columns = this.selectList();
    const from = this.acceptKeyword('FROM') ? this.fromClause() : undefined;
    const prewhere = this.acceptKeyword('PREWHERE') ? this.expression() : undefined;
    const where = this.acceptKeyword('WHERE') ? this.expression() : undefined;
    const partitionBy = this.acceptKeyword('PARTITION BY') ? this.expressionList() : undefined;
    const shuffleBy = this.acceptKeyword('SHUFFLE BY') ? this.expressionList() : undefined;
    const groupBy = this.groupByClause();
    const having = this.acceptKeyword('HAVING') ? this.expression() : undefined;
    const windows = this.acceptKeyword('WINDOW') ? this.windowList() : undefined;
    const orderBy = this.acceptKeyword('ORDER BY') ? this.orderList() : undefined;
    const { limit, limitBy } = this.limitClauses();
    const emit = this.acceptKeyword('EMIT') ? this.emitClause(this.previous.start) : undefined;
    // Several SETTINGS clauses in a row are merged (`... SETTINGS a = 1 SETTINGS b = 2`).
    let settings: Setting[] | undefined;
    while (this.acceptKeyword('SETTINGS')) settings = [...(settings ?? []), ...this.settingsList()];
    return {
      kind: 'Select',
      ...(withItems ? { with: withItems } : {}),
      distinct,
      ...(distinctOn ? { distinctOn } : {}),
      ...(top ? { top } : {}),
      columns,
      ...(from ? { from } : {}),
      ...(prewhere ? { prewhere } : {}),
      ...(where ? { where } : {}),
      ...(partitionBy ? { partitionBy } : {}),
      ...(shuffleBy ? { shuffleBy } : {}),
      ...(groupBy ? { groupBy } : {}),
      ...(having ? { having } : {}),
      ...(windows ? { windows } : {}),
      ...(orderBy ? { orderBy } : {}),
      ...(limitBy ? { limitBy } : {}),
      ...(limit ? { limit } : {}),
      ...(emit ? { emit } : {}),
      ...(settings ? { settings } : {}),
      span: this.spanFrom(start),
    };
  }

  /** The select list; a trailing comma before FROM (or the end) is allowed, as ClickHouse allows it. */
  private selectList(): Expr[] {
    const list = [this.expressionWithAlias(true)];
    while (this.acceptOp(',')) {
      const t = this.token;
      if (
        t.type === 'eof' ||
        (t.type === 'op' && (t.value === ')' || t.value === ';')) ||
        (t.type === 'ident' &&
          [
            'FROM',
            'WHERE',
            'GROUP',
            'ORDER',
            'LIMIT',
            'EMIT',
            'SETTINGS',
            'UNION',
            'FORMAT',
            'HAVING',
          ].includes(t.value.toUpperCase()))
      )
        break;
      list.push(this.expressionWithAlias(true));
    }
    return list;
  }

  private withList(): WithItem[] {
    const items: WithItem[] = [];
    do {
      const start = this.token.start;
      const t = this.token;
      const n1 = this.peek();
      const n2 = this.peek(2);
      if (
        (t.type === 'ident' || t.type === 'quoted') &&
        TokenCursor.isWord(n1, 'AS') &&
        n2.type === 'op' &&
        n2.value === '(' &&
        this.startsQuery(3)
      ) {
        this.pos += 3;
        const query = this.query();
        this.expectOp(')');
        items.push({ kind: 'Cte', name: t.value, query, span: this.spanFrom(start) });
      } else {
        const expr = this.expression();
        this.expectKeyword('AS');
        const name = this.name('alias');
        items.push({ kind: 'WithExpr', expr, name, span: this.spanFrom(start) });
      }
    } while (this.acceptOp(','));
    return items;
  }

  private groupByClause(): GroupBy | undefined {
    const start = this.token.start;
    let modifier: GroupBy['modifier'];
    let groupingSets = false;
    let items: Expr[] | undefined;
    if (this.acceptKeyword('GROUP BY')) {
      const m = this.acceptAnyKeyword('ROLLUP', 'CUBE', 'GROUPING SETS');
      if (m) {
        this.expectOp('(');
        if (m === 'GROUPING SETS') {
          groupingSets = true;
          items = this.expressionList().map((e) =>
            e.kind === 'Tuple' ? e : { kind: 'Tuple' as const, elements: [e], span: e.span },
          );
        } else {
          modifier = m;
          items = this.expressionList();
        }
        this.expectOp(')');
      } else items = this.expressionList();
    }
    let withTotals = false;
    for (;;) {
      if (this.isKeyword('WITH ROLLUP') && !modifier) {
        this.pos += 2;
        modifier = 'ROLLUP';
      } else if (this.isKeyword('WITH CUBE') && !modifier) {
        this.pos += 2;
        modifier = 'CUBE';
      } else if (this.isKeyword('WITH TOTALS') && !withTotals) {
        this.pos += 2;
        withTotals = true;
      } else break;
    }
    if (!items && !modifier && !withTotals) return undefined;
    return {
      kind: 'GroupBy',
      items: items ?? [],
      ...(modifier ? { modifier } : {}),
      ...(groupingSets ? { groupingSets } : {}),
      withTotals,
      span: this.spanFrom(start),
    };
  }

  private windowList(): NamedWindow[] {
    const list: NamedWindow[] = [];
    do {
      const start = this.token.start;
      const name = this.name('window name');
      this.expectKeyword('AS');
      const spec = this.windowSpec();
      list.push({ kind: 'NamedWindow', name, spec, span: this.spanFrom(start) });
    } while (this.acceptOp(','));
    return list;
  }

  /** LIMIT n [OFFSET m | , m] [BY exprs] [LIMIT n [OFFSET m]] [WITH TIES], and a lone OFFSET m [ROWS]. */
  private limitClauses(): { limit?: Limit; limitBy?: LimitBy } {
    let limit: Limit | undefined;
    let limitBy: LimitBy | undefined;
    for (let round = 0; round < 2; round++) {
      const start = this.token.start;
      if (!this.acceptKeyword('LIMIT')) break;
      let length = this.expression();
      let offset: Expr | undefined;
      if (this.acceptOp(',')) {
        offset = length;
        length = this.expression();
      } else if (this.acceptKeyword('OFFSET')) {
        offset = this.expression();
      }
      if (!limitBy && this.acceptKeyword('BY')) {
        const by = this.expressionList();
        limitBy = {
          kind: 'LimitBy',
          limit: length,
          ...(offset ? { offset } : {}),
          by,
          span: this.spanFrom(start),
        };
        continue;
      }
      const withTies = this.acceptKeyword('WITH TIES');
      limit = {
        kind: 'Limit',
        limit: length,
        ...(offset ? { offset } : {}),
        withTies,
        span: this.spanFrom(start),
      };
      break;
    }
    if (!limit && this.isKeyword('OFFSET')) {
      const start = this.token.start;
      this.pos++;
      const offset = this.expression();
      this.acceptAnyKeyword('ROWS', 'ROW');
      let length: Expr | undefined;
      if (this.acceptAnyKeyword('FETCH FIRST', 'FETCH NEXT')) {
        length = this.expression();
        this.acceptAnyKeyword('ROWS', 'ROW');
        this.acceptAnyKeyword('ONLY');
      }
      // `OFFSET n` alone: no row limit. ClickHouse writes it as LIMIT <max uint64> OFFSET n.
      limit = {
        kind: 'Limit',
        limit: length ?? { kind: 'Number', text: '18446744073709551615', span: this.spanFrom(start) },
        offset,
        withTies: false,
        span: this.spanFrom(start),
      };
    }
    return { ...(limit ? { limit } : {}), ...(limitBy ? { limitBy } : {}) };
  }

  /** An interval operand in EMIT: `5s`, `INTERVAL 5 SECOND`, `-1m`. */
  private emitInterval(): Expr {
    return this.unary();
  }

  /**
   * EMIT [STREAM|CHANGELOG] policies... (streaming-sql-notes.md §1.6). Policies may come in any
   * order, separated by AND or nothing: AFTER WATERMARK [WITH|AND DELAY i], AFTER WINDOW CLOSE,
   * DELAY i, PERIODIC i [REPEAT], ON UPDATE [WITH BATCH i], TIMEOUT i, LAST i [ON PROCTIME].
   */
  emitClause(start: number): EmitClause {
    const mode = this.acceptAnyKeyword('STREAM', 'CHANGELOG');
    const e: {
      afterWatermark: boolean;
      windowClose?: boolean;
      delay?: Expr;
      periodic?: Expr;
      repeat?: boolean;
      onUpdate: boolean;
      onUpdateBatch?: Expr;
      timeout?: Expr;
      last?: Expr;
      lastOnProctime?: boolean;
    } = { afterWatermark: false, onUpdate: false };
    const once = (what: string, already: boolean, at: number) => {
      if (already) this.failAt(at, `Can not use repeat '${what}' in EMIT clause`);
    };
    let policies = 0;
    for (;;) {
      const save = this.pos;
      const joined = policies > 0 && this.acceptKeyword('AND');
      const at = this.token.start;
      if (this.acceptKeyword('AFTER WATERMARK')) {
        once('AFTER WATERMARK', e.afterWatermark, at);
        e.afterWatermark = true;
        if (this.acceptKeyword('WITH DELAY') || this.acceptKeyword('AND DELAY')) {
          once('DELAY', e.delay !== undefined, at);
          e.delay = this.emitInterval();
        }
      } else if (this.acceptKeyword('AFTER WINDOW CLOSE')) {
        once('AFTER WATERMARK', e.afterWatermark, at);
        e.afterWatermark = true;
        e.windowClose = true;
        if (this.acceptKeyword('WITH DELAY') || this.acceptKeyword('AND DELAY')) {
          once('DELAY', e.delay !== undefined, at);
          e.delay = this.emitInterval();
        }
      } else if (this.acceptKeyword('DELAY')) {
        once('DELAY', e.delay !== undefined, at);
        e.delay = this.emitInterval();
      } else if (this.acceptKeyword('PERIODIC')) {
        once('PERIODIC', e.periodic !== undefined, at);
        e.periodic = this.emitInterval();
        if (this.acceptKeyword('REPEAT')) e.repeat = true;
      } else if (this.acceptKeyword('ON UPDATE')) {
        once('ON UPDATE', e.onUpdate, at);
        e.onUpdate = true;
        if (this.acceptKeyword('WITH BATCH')) e.onUpdateBatch = this.emitInterval();
      } else if (this.acceptKeyword('TIMEOUT')) {
        once('TIMEOUT', e.timeout !== undefined, at);
        e.timeout = this.emitInterval();
      } else if (this.acceptKeyword('LAST')) {
        once('LAST', e.last !== undefined, at);
        e.last = this.emitInterval();
        if (this.acceptKeyword('ON PROCTIME')) e.lastOnProctime = true;
      } else {
        if (joined) this.fail();
        this.pos = save;
        break;
      }
      policies++;
    }
    if (!mode && policies === 0) {
      this.expect('STREAM');
      this.expect('CHANGELOG');
      this.fail();
    }
    return {
      kind: 'Emit',
      ...(mode ? { mode } : {}),
      afterWatermark: e.afterWatermark,
      ...(e.windowClose ? { windowClose: true } : {}),
      ...(e.delay ? { delay: e.delay } : {}),
      ...(e.periodic ? { periodic: e.periodic } : {}),
      ...(e.repeat ? { repeat: true } : {}),
      onUpdate: e.onUpdate,
      ...(e.onUpdateBatch ? { onUpdateBatch: e.onUpdateBatch } : {}),
      ...(e.timeout ? { timeout: e.timeout } : {}),
      ...(e.last ? { last: e.last } : {}),
      ...(e.lastOnProctime ? { lastOnProctime: true } : {}),
      span: this.spanFrom(start),
    };
  }

  // --- FROM ---

  /** The FROM clause: table items combined by joins, commas and ARRAY JOIN. */
  fromClause(): FromItem {
    const start = this.token.start;
    let left = this.tableItem();
    for (;;) {
      if (this.acceptOp(',')) {
        const right = this.tableItem();
        left = { kind: 'Join', left, right, joinKind: 'COMMA', span: this.spanFrom(start) };
        continue;
      }
      const arrayJoin = this.arrayJoinHead();
      if (arrayJoin !== undefined) {
        const exprs = this.expressionList();
        left = { kind: 'ArrayJoin', left, leftArrayJoin: arrayJoin, exprs, span: this.spanFrom(start) };
        continue;
      }
      const head = this.joinHead();
      if (!head) return left;
      const right = this.tableItem();
      let on: Expr | undefined;
      let using: Identifier[] | undefined;
      if (this.acceptKeyword('ON')) on = this.expression();
      else if (this.acceptKeyword('USING')) {
        const paren = this.acceptOp('(');
        using = [];
        do {
          const s = this.token.start;
          using.push({ kind: 'Identifier', parts: this.qualifiedParts(), span: this.spanFrom(s) });
        } while (this.acceptOp(','));
        if (paren) this.expectOp(')');
      } else if (head.joinKind !== 'CROSS') {
        this.fail();
      }
      left = {
        kind: 'Join',
        left,
        right,
        joinKind: head.joinKind,
        ...(head.strictness ? { strictness: head.strictness } : {}),
        ...(head.global ? { global: true } : {}),
        ...(on ? { on } : {}),
        ...(using ? { using } : {}),
        span: this.spanFrom(start),
      };
    }
  }

  /** `[LEFT] ARRAY JOIN`: returns whether LEFT was given, or undefined if no ARRAY JOIN is here. */
  private arrayJoinHead(): boolean | undefined {
    if (this.acceptKeyword('ARRAY JOIN')) return false;
    if (this.acceptKeyword('LEFT ARRAY JOIN')) return true;
    return undefined;
  }

  /**
   * `[GLOBAL|LOCAL] [strictness] [kind] [OUTER] [strictness] JOIN`. Consumes nothing unless the
   * words end in JOIN.
   */
  private joinHead(): { joinKind: JoinKind; strictness?: JoinStrictness; global?: boolean } | undefined {
    const save = this.pos;
    let global = false;
    let strictness: JoinStrictness | undefined;
    let joinKind: JoinKind | undefined;
    if (this.acceptKeyword('GLOBAL')) global = true;
    else this.acceptKeyword('LOCAL');
    strictness = this.acceptAnyKeyword(...JOIN_STRICTNESS);
    joinKind = this.acceptAnyKeyword(...JOIN_KINDS);
    if (joinKind) this.acceptKeyword('OUTER');
    if (!strictness) strictness = this.acceptAnyKeyword(...JOIN_STRICTNESS);
    if (!this.acceptKeyword('JOIN')) {
      this.pos = save;
      return undefined;
    }
    joinKind ??= 'INNER';
    return { joinKind, ...(strictness ? { strictness } : {}), ...(global ? { global } : {}) };
  }

  /** One table item: `[db.]name`, `f(args)`, `(query)`, `(from items)`, each with an optional alias. */
  tableItem(): FromItem {
    const start = this.token.start;
    if (this.acceptOp('(')) {
      const subquery = () => {
        const query = this.query();
        this.expectOp(')');
        const alias = this.tableAlias();
        return {
          kind: 'SubqueryTable' as const,
          query,
          ...(alias ? { alias } : {}),
          span: this.spanFrom(start),
        };
      };
      if (this.startsQuery()) return subquery();
      if (this.isOp('(')) {
        // `((SELECT ...))` or `((a JOIN b))`: try the query first.
        const save = this.pos;
        try {
          return subquery();
        } catch {
          this.pos = save;
        }
      }
      const inner = this.nested(() => this.fromClause());
      this.expectOp(')');
      return inner;
    }
    const first = this.token;
    // a reserved word is no stream name, but may name a table function: `FROM values('x int', 1)`
    const call = this.peek()?.type === 'op' && this.peek()?.value === '(';
    if (first.type === 'ident' && NON_EXPRESSION_WORDS.has(first.value.toUpperCase()) && !call) {
      this.expect('stream name');
      this.fail();
    }
    const parts = this.qualifiedParts();
    if (parts.length > 2) this.failAt(start, `Too many parts in table name '${parts.join('.')}'`);
    if (this.isOp('(') && parts.length === 1) {
      this.pos++;
      const args = this.isOp(')') ? [] : this.expressionList();
      this.expectOp(')');
      const alias = this.tableAlias();
      return {
        kind: 'TableFunction',
        name: parts[0] as string,
        args,
        ...(alias ? { alias } : {}),
        span: this.spanFrom(start),
      };
    }
    const final = this.acceptKeyword('FINAL');
    const alias = this.tableAlias();
    const finalAfter = !final && this.acceptKeyword('FINAL');
    const name = parts[parts.length - 1] as string;
    const database = parts.length === 2 ? parts[0] : undefined;
    return {
      kind: 'Table',
      ...(database !== undefined ? { database } : {}),
      name,
      ...(alias ? { alias } : {}),
      ...(final || finalAfter ? { final: true } : {}),
      span: this.spanFrom(start),
    };
  }

  private tableAlias(): string | undefined {
    if (this.acceptKeyword('AS')) return this.name('alias');
    const t = this.token;
    if ((t.type === 'ident' && canBeBareAlias(t.value)) || t.type === 'quoted') {
      this.pos++;
      return t.value;
    }
    return undefined;
  }
}
