import type { Expr, Identifier, Setting } from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import type {
  ColumnDef,
  CreateDatabase,
  CreateDictionary,
  CreateExternalTable,
  CreateFormatSchema,
  CreateFunction,
  CreateInput,
  CreateStream,
  CreateView,
  DictionaryCall,
  FunctionParam,
  IndexDef,
  QualifiedName,
  Statement,
  TtlItem,
} from '../ast/statement.ts';
import type { DataType } from '../types/data-type.ts';
import { DdlParser } from './parser-ddl.ts';

/** The CREATE statements. */
export abstract class CreateParser extends DdlParser {
  /** CREATE was consumed at `start`. */
  create(start: number): Statement {
    const orReplace = this.acceptKeyword('OR REPLACE');
    if (this.acceptKeyword('STREAM')) return this.createStream(start, 'STREAM', orReplace);
    if (this.acceptKeyword('RANDOM STREAM')) return this.createStream(start, 'RANDOM', orReplace);
    if (this.acceptKeyword('MUTABLE STREAM')) return this.createStream(start, 'MUTABLE', orReplace);
    if (this.acceptKeyword('EXTERNAL STREAM')) return this.createStream(start, 'EXTERNAL', orReplace);
    if (this.acceptKeyword('EXTERNAL TABLE')) return this.createExternalTable(start, orReplace);
    if (this.acceptKeyword('MATERIALIZED VIEW')) return this.createView(start, true, orReplace);
    if (this.acceptKeyword('VIEW')) return this.createView(start, false, orReplace);
    if (this.acceptKeyword('INPUT')) return this.createInput(start);
    if (this.acceptKeyword('DICTIONARY')) return this.createDictionary(start, orReplace);
    if (this.acceptKeyword('FORMAT SCHEMA')) return this.createFormatSchema(start, orReplace);
    if (this.acceptKeyword('AGGREGATE FUNCTION')) return this.createFunction(start, orReplace, 'aggregate');
    if (this.acceptKeyword('REMOTE FUNCTION')) return this.createFunction(start, orReplace, 'remote');
    if (this.acceptKeyword('FUNCTION')) return this.createFunction(start, orReplace, 'plain');
    if (this.acceptKeyword('DATABASE')) return this.createDatabase(start);
    this.fail();
  }

  /** `(col, col, INDEX ..., PRIMARY KEY (..))` */
  private columnList(): { columns: ColumnDef[]; indexes: IndexDef[]; primaryKey?: Expr } {
    const columns: ColumnDef[] = [];
    const indexes: IndexDef[] = [];
    let primaryKey: Expr | undefined;
    this.expectOp('(');
    if (!this.isOp(')')) {
      do {
        const start = this.token.start;
        if (this.isKeyword('INDEX') && this.peek().type !== 'op') {
          this.pos++;
          indexes.push(this.indexDef(start));
        } else if (this.isKeyword('PRIMARY KEY')) {
          this.pos += 2;
          primaryKey = this.expression();
        } else columns.push(this.columnDef());
      } while (this.acceptOp(','));
    }
    this.expectOp(')');
    return { columns, indexes, ...(primaryKey ? { primaryKey } : {}) };
  }

  private createStream(start: number, variant: CreateStream['variant'], orReplace: boolean): CreateStream {
    const ifNotExists = this.ifNotExists();
    const target = this.qualifiedName();
    const cols = this.isOp('(') ? this.columnList() : { columns: [], indexes: [] };
    let engine: Expr | undefined;
    let orderBy: Expr | undefined;
    let partitionBy: Expr | undefined;
    let primaryKey: Expr | undefined;
    let ttl: TtlItem[] | undefined;
    let settings: Setting[] | undefined;
    let comment: string | undefined;
    let asQuery: Query | undefined;
    for (;;) {
      if (!engine && this.acceptKeyword('ENGINE')) {
        this.acceptOp('=');
        engine = this.expression();
      } else if (!orderBy && this.acceptKeyword('ORDER BY')) orderBy = this.expression();
      else if (!partitionBy && this.acceptKeyword('PARTITION BY')) partitionBy = this.expression();
      else if (!primaryKey && this.acceptKeyword('PRIMARY KEY')) primaryKey = this.expression();
      else if (!ttl && this.acceptKeyword('TTL')) ttl = this.ttlList();
      else if (!settings && this.acceptKeyword('SETTINGS')) settings = this.settingsList();
      else if (comment === undefined && this.acceptKeyword('COMMENT')) comment = this.stringLiteral();
      else if (!asQuery && this.acceptKeyword('AS')) asQuery = this.query();
      else break;
    }
    return {
      kind: 'CreateStream',
      variant,
      orReplace,
      ifNotExists,
      target,
      columns: cols.columns,
      indexes: cols.indexes,
      ...(cols.primaryKey ? { columnsPrimaryKey: cols.primaryKey } : {}),
      ...(engine ? { engine } : {}),
      ...(orderBy ? { orderBy } : {}),
      ...(partitionBy ? { partitionBy } : {}),
      ...(primaryKey ? { primaryKey } : {}),
      ...(ttl ? { ttl } : {}),
      ...(settings ? { settings } : {}),
      ...(comment !== undefined ? { comment } : {}),
      ...(asQuery ? { asQuery } : {}),
      span: this.spanFrom(start),
    };
  }

  private createExternalTable(start: number, orReplace: boolean): CreateExternalTable {
    const ifNotExists = this.ifNotExists();
    const target = this.qualifiedName();
    const columns = this.isOp('(') ? this.columnList().columns : [];
    let partitionBy: Expr | undefined;
    let settings: Setting[] | undefined;
    let comment: string | undefined;
    for (;;) {
      if (!partitionBy && this.acceptKeyword('PARTITION BY')) partitionBy = this.expression();
      else if (!settings && this.acceptKeyword('SETTINGS')) settings = this.settingsList();
      else if (comment === undefined && this.acceptKeyword('COMMENT')) comment = this.stringLiteral();
      else break;
    }
    return {
      kind: 'CreateExternalTable',
      orReplace,
      ifNotExists,
      target,
      columns,
      ...(partitionBy ? { partitionBy } : {}),
      ...(settings ? { settings } : {}),
      ...(comment !== undefined ? { comment } : {}),
      span: this.spanFrom(start),
    };
  }

  private createView(start: number, materialized: boolean, orReplace: boolean): CreateView {
    const ifNotExists = this.ifNotExists();
    const target = this.qualifiedName();
    let columns: ColumnDef[] | undefined;
    if (this.isOp('(') && !this.startsQuery(1)) columns = this.columnList().columns;
    let into: QualifiedName | undefined;
    if (this.acceptKeyword('INTO')) into = this.qualifiedName();
    this.expectKeyword('AS');
    const query = this.query();
    const comment = this.acceptKeyword('COMMENT') ? this.stringLiteral() : undefined;
    return {
      kind: 'CreateView',
      materialized,
      orReplace,
      ifNotExists,
      target,
      ...(columns ? { columns } : {}),
      ...(into ? { into } : {}),
      query,
      ...(comment !== undefined ? { comment } : {}),
      span: this.spanFrom(start),
    };
  }

  private createInput(start: number): CreateInput {
    const ifNotExists = this.ifNotExists();
    const name = this.name('input name');
    this.expectKeyword('SETTINGS');
    const settings = this.settingsList();
    const comment = this.acceptKeyword('COMMENT') ? this.stringLiteral() : undefined;
    return {
      kind: 'CreateInput',
      ifNotExists,
      name,
      settings,
      ...(comment !== undefined ? { comment } : {}),
      span: this.spanFrom(start),
    };
  }

  // --- dictionaries ---

  private createDictionary(start: number, orReplace: boolean): CreateDictionary {
    const ifNotExists = this.ifNotExists();
    const target = this.qualifiedName();
    const { columns } = this.columnList();
    let primaryKey: Expr[] = [];
    let source: DictionaryCall | undefined;
    let layout: DictionaryCall | undefined;
    let lifetime: CreateDictionary['lifetime'];
    let range: CreateDictionary['range'];
    let settings: Setting[] | undefined;
    let comment: string | undefined;
    for (;;) {
      if (this.acceptKeyword('PRIMARY KEY')) primaryKey = this.expressionList();
      else if (this.acceptKeyword('SOURCE')) source = this.dictionaryWrapped();
      else if (this.acceptKeyword('LAYOUT')) layout = this.dictionaryWrapped();
      else if (this.acceptKeyword('LIFETIME')) lifetime = this.minMax();
      else if (this.acceptKeyword('RANGE')) {
        this.expectOp('(');
        this.expectKeyword('MIN');
        const min = this.identifier();
        this.expectKeyword('MAX');
        const max = this.identifier();
        this.expectOp(')');
        range = { min, max };
      } else if (this.acceptKeyword('SETTINGS')) {
        const paren = this.acceptOp('(');
        settings = this.settingsList();
        if (paren) this.expectOp(')');
      } else if (this.acceptKeyword('COMMENT')) comment = this.stringLiteral();
      else break;
    }
    return {
      kind: 'CreateDictionary',
      orReplace,
      ifNotExists,
      target,
      columns,
      primaryKey,
      ...(source ? { source } : {}),
      ...(layout ? { layout } : {}),
      ...(lifetime ? { lifetime } : {}),
      ...(range ? { range } : {}),
      ...(settings ? { settings } : {}),
      ...(comment !== undefined ? { comment } : {}),
      span: this.spanFrom(start),
    };
  }

  private identifier(): Identifier {
    const start = this.token.start;
    return { kind: 'Identifier', parts: this.qualifiedParts(), span: this.spanFrom(start) };
  }

  /** `(MIN a MAX b)` or `(n)` */
  private minMax(): { min?: Expr; max: Expr } {
    this.expectOp('(');
    let min: Expr | undefined;
    let max: Expr;
    if (this.acceptKeyword('MIN')) {
      min = this.expression();
      this.expectKeyword('MAX');
      max = this.expression();
    } else if (this.acceptKeyword('MAX')) {
      max = this.expression();
      this.expectKeyword('MIN');
      min = this.expression();
    } else max = this.expression();
    this.expectOp(')');
    return { ...(min ? { min } : {}), max };
  }

  /** `(NAME(args))` as in SOURCE(TIMEPLUS(STREAM 'x')) or LAYOUT(HASHED()). */
  private dictionaryWrapped(): DictionaryCall {
    this.expectOp('(');
    const call = this.dictionaryCall();
    this.expectOp(')');
    return call;
  }

  private dictionaryCall(): DictionaryCall {
    const start = this.token.start;
    const name = this.name('name');
    this.expectOp('(');
    const args: { key: string; value: Expr | DictionaryCall }[] = [];
    while (!this.isOp(')')) {
      // A nested element `credentials(user 'u' password 'p')`: its name is its key.
      if (this.isName() && this.peek().type === 'op' && this.peek().value === '(') {
        const nested = this.dictionaryCall();
        args.push({ key: nested.name, value: nested });
        this.acceptOp(',');
        continue;
      }
      const key = this.name('key');
      const value: Expr | DictionaryCall =
        this.isName() && this.peek().type === 'op' && this.peek().value === '('
          ? this.dictionaryCall()
          : this.unary();
      args.push({ key, value });
      this.acceptOp(',');
    }
    this.expectOp(')');
    return { kind: 'DictionaryCall', name, args, span: this.spanFrom(start) };
  }

  // --- format schemas, functions, databases ---

  private createFormatSchema(start: number, orReplace: boolean): CreateFormatSchema {
    const ifNotExists = this.ifNotExists();
    const name = this.name('schema name');
    this.expectKeyword('AS');
    const body = this.stringLiteral('schema text');
    this.expectKeyword('TYPE');
    const schemaType = this.name('schema type');
    return {
      kind: 'CreateFormatSchema',
      orReplace,
      ifNotExists,
      name,
      body,
      schemaType,
      span: this.spanFrom(start),
    };
  }

  private createFunction(
    start: number,
    orReplace: boolean,
    form: 'plain' | 'aggregate' | 'remote',
  ): CreateFunction {
    const ifNotExists = this.ifNotExists();
    const name = this.name('function name');
    const base = {
      kind: 'CreateFunction' as const,
      aggregate: form === 'aggregate',
      orReplace,
      ifNotExists,
      name,
    };
    if (form === 'plain' && this.acceptKeyword('AS')) {
      const lambda = this.expression();
      return { ...base, variant: 'SQL', lambda, span: this.spanFrom(start) };
    }
    const params: FunctionParam[] = [];
    this.expectOp('(');
    if (!this.isOp(')')) {
      do {
        const pname = this.name('argument name');
        params.push({ name: pname, type: this.dataType() });
      } while (this.acceptOp(','));
    }
    this.expectOp(')');
    this.expectKeyword('RETURNS');
    const returns: DataType = this.dataType();
    if (form === 'remote' || this.isKeyword('URL')) {
      this.expectKeyword('URL');
      const url = this.stringLiteral('URL');
      let authMethod: string | undefined;
      let authHeader: string | undefined;
      let authKey: string | undefined;
      let executionTimeout: Expr | undefined;
      for (;;) {
        if (this.acceptKeyword('AUTH_METHOD')) authMethod = this.stringLiteral();
        else if (this.acceptKeyword('AUTH_HEADER')) authHeader = this.stringLiteral();
        else if (this.acceptKeyword('AUTH_KEY')) authKey = this.stringLiteral();
        else if (this.acceptKeyword('EXECUTION_TIMEOUT')) executionTimeout = this.unary();
        else break;
      }
      return {
        ...base,
        variant: 'REMOTE',
        params,
        returns,
        url,
        ...(authMethod !== undefined ? { authMethod } : {}),
        ...(authHeader !== undefined ? { authHeader } : {}),
        ...(authKey !== undefined ? { authKey } : {}),
        ...(executionTimeout ? { executionTimeout } : {}),
        span: this.spanFrom(start),
      };
    }
    this.expectKeyword('LANGUAGE');
    const language = this.name('language').toUpperCase();
    this.expectKeyword('AS');
    const body = this.stringLiteral('function body');
    return { ...base, variant: 'SCRIPT', params, returns, language, body, span: this.spanFrom(start) };
  }

  private createDatabase(start: number): CreateDatabase {
    const ifNotExists = this.ifNotExists();
    const name = this.name('database name');
    let engine: Expr | undefined;
    let comment: string | undefined;
    for (;;) {
      if (!engine && this.acceptKeyword('ENGINE')) {
        this.acceptOp('=');
        engine = this.expression();
      } else if (comment === undefined && this.acceptKeyword('COMMENT')) comment = this.stringLiteral();
      else break;
    }
    return {
      kind: 'CreateDatabase',
      ifNotExists,
      name,
      ...(engine ? { engine } : {}),
      ...(comment !== undefined ? { comment } : {}),
      span: this.spanFrom(start),
    };
  }
}
