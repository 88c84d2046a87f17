import type { Expr } from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import type {
  DescribeStatement,
  ExplainStatement,
  InsertStatement,
  OptimizeStatement,
  QualifiedName,
  ShowCreateObject,
  ShowStatement,
  ShowWhat,
  Statement,
  SystemStatement,
} from '../ast/statement.ts';
import { CreateParser } from './parser-create.ts';

const SHOW_WHAT: ShowWhat[] = [
  'STREAMS',
  'TABLES',
  'DATABASES',
  'MATERIALIZED VIEWS',
  'VIEWS',
  'EXTERNAL STREAMS',
  'EXTERNAL TABLES',
  'DICTIONARIES',
  'FUNCTIONS',
  'INPUTS',
  'FORMAT SCHEMAS',
  'SETTINGS',
  'PROCESSLIST',
  'COLUMNS',
  'USERS',
];

const SHOW_CREATE: ShowCreateObject[] = [
  'STREAM',
  'TABLE',
  'MATERIALIZED VIEW',
  'VIEW',
  'EXTERNAL STREAM',
  'EXTERNAL TABLE',
  'DATABASE',
  'DICTIONARY',
  'INPUT',
  'FORMAT SCHEMA',
  'FUNCTION',
];

const EXPLAIN_KINDS = [
  'AST',
  'SYNTAX',
  'PLAN',
  'PIPELINE',
  'ESTIMATE',
  'QUERY TREE',
  'TABLE OVERRIDE',
] as const;

/** Statement dispatch and the statements that are neither queries nor DDL. */
export class StatementParser extends CreateParser {
  /** One statement at the cursor (no trailing `;` consumed). */
  statement(): Statement {
    const t = this.token;
    const start = t.start;
    this.expect('SELECT');
    this.expect('WITH');
    if (this.startsQuery() || this.isOp('(')) return this.query();
    if (this.acceptKeyword('CREATE')) return this.create(start);
    if (this.acceptKeyword('DROP')) return this.drop(start);
    if (this.acceptKeyword('ALTER')) return this.alter(start);
    if (this.acceptKeyword('RENAME')) return this.rename(start);
    if (this.acceptKeyword('TRUNCATE')) return this.truncate(start);
    if (this.acceptKeyword('INSERT')) return this.insert(start);
    if (this.acceptKeyword('SHOW')) return this.show(start);
    if (this.acceptKeyword('DESCRIBE') || this.acceptKeyword('DESC')) return this.describe(start);
    if (this.acceptKeyword('EXPLAIN')) return this.explain(start);
    if (this.acceptKeyword('KILL QUERY')) return this.killQuery(start);
    if (this.acceptKeyword('USE'))
      return { kind: 'Use', database: this.name('database name'), span: this.spanFrom(start) };
    if (this.acceptKeyword('SET'))
      return { kind: 'Set', settings: this.settingsList(), span: this.spanFrom(start) };
    if (this.acceptKeyword('OPTIMIZE')) return this.optimize(start);
    if (this.acceptKeyword('SYSTEM')) return this.system(start);
    if (this.acceptKeyword('SUBSCRIBE TO'))
      return { kind: 'Subscribe', query: this.query(), span: this.spanFrom(start) };
    if (this.acceptKeyword('RECOVER FROM'))
      return { kind: 'Recover', queryId: this.stringLiteral('query id'), span: this.spanFrom(start) };
    if (this.acceptKeyword('UNSUBSCRIBE TO')) {
      return { kind: 'Unsubscribe', queryId: this.stringLiteral('query id'), span: this.spanFrom(start) };
    }
    this.fail();
  }

  private insert(start: number): InsertStatement {
    this.expectKeyword('INTO');
    let target: QualifiedName | undefined;
    let tableFunction: Expr | undefined;
    if (this.acceptKeyword('FUNCTION')) tableFunction = this.expression();
    else {
      this.acceptAnyKeyword('STREAM', 'TABLE');
      target = this.qualifiedName();
    }
    let columns: Expr[] | undefined;
    if (this.isOp('(') && !this.startsQuery(1)) {
      this.pos++;
      columns = this.isOp(')') ? [] : this.expressionList();
      this.expectOp(')');
    }
    const settings = this.acceptKeyword('SETTINGS') ? this.settingsList() : undefined;
    const head = {
      kind: 'Insert' as const,
      ...(target ? { target } : {}),
      ...(tableFunction ? { tableFunction } : {}),
      ...(columns ? { columns } : {}),
      ...(settings ? { settings } : {}),
    };
    if (this.acceptKeyword('VALUES')) {
      const values: Expr[][] = [];
      do {
        this.expectOp('(');
        values.push(this.isOp(')') ? [] : this.expressionList());
        this.expectOp(')');
        this.acceptOp(',');
      } while (this.isOp('('));
      return { ...head, values, span: this.spanFrom(start) };
    }
    if (this.acceptKeyword('FORMAT')) {
      const format = this.name('format name');
      const rest = this.token;
      const data = rest.type === 'eof' ? '' : this.source.slice(rest.start).replace(/^\s+/, '');
      this.pos = this.tokens.length - 1;
      return { ...head, format, data, span: { start, end: this.source.length } };
    }
    if (this.startsQuery() || this.isOp('(')) {
      const query: Query = this.query();
      return { ...head, query, span: this.spanFrom(start) };
    }
    this.expect('SELECT');
    this.fail();
  }

  private show(start: number): Statement {
    if (this.acceptKeyword('CREATE')) {
      const object = this.acceptAnyKeyword(...SHOW_CREATE);
      const target = this.qualifiedName();
      return { kind: 'ShowCreate', ...(object ? { object } : {}), target, span: this.spanFrom(start) };
    }
    const full = this.acceptKeyword('FULL');
    const what = this.acceptAnyKeyword(...SHOW_WHAT);
    if (!what) this.fail();
    let from: QualifiedName | undefined;
    if (this.acceptAnyKeyword('FROM', 'IN')) from = this.qualifiedName();
    let like: string | undefined;
    let notLike = false;
    let ilike = false;
    let where: Expr | undefined;
    if (this.acceptKeyword('NOT LIKE')) {
      notLike = true;
      like = this.stringLiteral();
    } else if (this.acceptKeyword('LIKE')) like = this.stringLiteral();
    else if (this.acceptKeyword('ILIKE')) {
      ilike = true;
      like = this.stringLiteral();
    } else if (this.acceptKeyword('WHERE')) where = this.expression();
    const limit = this.acceptKeyword('LIMIT') ? this.expression() : undefined;
    const show: ShowStatement = {
      kind: 'Show',
      what,
      ...(full ? { full } : {}),
      ...(from ? { from } : {}),
      ...(like !== undefined ? { like } : {}),
      ...(notLike ? { notLike } : {}),
      ...(ilike ? { ilike } : {}),
      ...(where ? { where } : {}),
      ...(limit ? { limit } : {}),
      span: this.spanFrom(start),
    };
    return show;
  }

  private describe(start: number): DescribeStatement {
    let body: Partial<DescribeStatement>;
    if (this.isOp('(')) {
      this.pos++;
      const query = this.query();
      this.expectOp(')');
      body = { query };
    } else {
      if (!(this.peek().type === 'op' && this.peek().value === '(')) this.acceptAnyKeyword('STREAM', 'TABLE');
      if (this.isName() && this.peek().type === 'op' && this.peek().value === '(')
        body = { tableFunction: this.expression() };
      else body = { target: this.qualifiedName() };
    }
    const settings = this.acceptKeyword('SETTINGS') ? this.settingsList() : undefined;
    return { kind: 'Describe', ...body, ...(settings ? { settings } : {}), span: this.spanFrom(start) };
  }

  private explain(start: number): ExplainStatement {
    const explainKind = this.acceptAnyKeyword(...EXPLAIN_KINDS);
    const options =
      this.isName() && this.peek().type === 'op' && this.peek().value === '=' ? this.settingsList() : [];
    const statement = this.statement();
    return {
      kind: 'Explain',
      ...(explainKind ? { explainKind } : {}),
      options,
      statement,
      span: this.spanFrom(start),
    };
  }

  private killQuery(start: number): Statement {
    this.expectKeyword('WHERE');
    const where = this.expression();
    const mode = this.acceptAnyKeyword('SYNC', 'ASYNC', 'TEST');
    return { kind: 'KillQuery', where, ...(mode ? { mode } : {}), span: this.spanFrom(start) };
  }

  private optimize(start: number): OptimizeStatement {
    this.acceptAnyKeyword('STREAM', 'TABLE');
    const target = this.qualifiedName();
    const partition = this.acceptKeyword('PARTITION') ? this.expression() : undefined;
    const final = this.acceptKeyword('FINAL');
    const deduplicate = this.acceptKeyword('DEDUPLICATE');
    return {
      kind: 'Optimize',
      target,
      ...(partition ? { partition } : {}),
      final,
      deduplicate,
      span: this.spanFrom(start),
    };
  }

  /** SYSTEM <words> [db.name]: words are upper-cased; a trailing quoted or dotted name is the target. */
  private system(start: number): SystemStatement {
    const words: string[] = [];
    let target: QualifiedName | undefined;
    while (!this.atEnd() && !this.isOp(';')) {
      const t = this.token;
      if (
        t.type === 'quoted' ||
        (t.type === 'ident' && this.peek().type === 'op' && this.peek().value === '.')
      ) {
        target = this.qualifiedName();
        break;
      }
      if (t.type !== 'ident') this.fail();
      words.push(t.value.toUpperCase());
      this.pos++;
    }
    if (words.length === 0) {
      this.expect('SYSTEM command');
      this.fail();
    }
    return { kind: 'System', words, ...(target ? { target } : {}), span: this.spanFrom(start) };
  }
}
