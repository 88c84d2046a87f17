import { err } from '../../errors/tributary-error.ts';
import type { Expr } from '../ast/expression.ts';
import type { Query } from '../ast/query.ts';
import type { ColumnDef, CreateStream, InsertStatement, Statement } from '../ast/statement.ts';
import { parseExpression, parseStatement } from '../parser/parse.ts';
import { PREC } from '../printer/print-expression.ts';
import { Layout, quoteIdentifier, quoteString } from '../printer/sql-text.ts';
import { ClickHousePrinter, type TranslateOptions } from './clickhouse-printer.ts';
import { isProtonQuerySetting } from './proton-settings.ts';
import type { TableResolver } from './resolver.ts';

export type { DedupCall, TranslateOptions } from './clickhouse-printer.ts';

const ONE_LINE = new Layout(false);

/** A resolver that knows nothing (for expressions that reference no stream). */
const NO_TABLES: TableResolver = { resolve: () => undefined };

/**
 * Translate a Proton statement to ClickHouse SQL with historical semantics: streams read their
 * stored rows (`s` and `table(s)` alike), window table functions become subqueries, EMIT and
 * PARTITION BY are dropped, function and type names are mapped, computed columns keep their
 * Proton names. Throws catalogue errors (UNKNOWN_STREAM, UNKNOWN_FUNCTION, UNKNOWN_TYPE,
 * NOT_IMPLEMENTED, ...) and SqlSyntaxError for text that does not parse.
 */
export function translate(input: string | Statement, options: TranslateOptions): string {
  const statement = typeof input === 'string' ? parseStatement(input) : input;
  return translateStatement(statement, new ClickHousePrinter(options), options);
}

/** Translate a query (SELECT / UNION). */
export function translateQuery(query: Query, options: TranslateOptions): string {
  return new ClickHousePrinter(options).translateQuery(query);
}

/** Translate one expression (function and type names, intervals, JSON paths, ...). */
export function translateExpression(expr: string | Expr, options: Partial<TranslateOptions> = {}): string {
  const e = typeof expr === 'string' ? parseExpression(expr) : expr;
  return new ClickHousePrinter({ resolver: NO_TABLES, ...options }).expr(e, PREC.alias, ONE_LINE);
}

/** A Proton type name in the engine's spelling, with UNKNOWN_TYPE (and a suggestion) for unknown names. */
export function translateType(text: string): string {
  const printer = new ClickHousePrinter({ resolver: NO_TABLES });
  return printer.dataType(parseStatementType(text));
}

function parseStatementType(text: string) {
  // Reuse the SQL parser so errors carry SQL positions.
  const e = parseExpression(`CAST(NULL AS ${text})`);
  if (e.kind !== 'Cast') throw err('BAD_ARGUMENTS', { detail: `Not a data type: ${text}` });
  return e.type;
}

/** A column definition in the engine's spelling: `` `ts` DateTime64(3, 'UTC') DEFAULT now64(3, 'UTC') ``. */
export function translateColumnDef(c: ColumnDef, options: Partial<TranslateOptions> = {}): string {
  const p = new ClickHousePrinter({ resolver: NO_TABLES, ...options });
  let out = quoteIdentifier(c.name);
  if (c.type) out += ` ${p.dataType(c.type)}`;
  if (c.nullable !== undefined) out += c.nullable ? ' NULL' : ' NOT NULL';
  if (c.default)
    out += ` ${c.default.kind}${c.default.expr ? ` ${p.expr(c.default.expr, PREC.lambda, ONE_LINE)}` : ''}`;
  if (c.comment !== undefined) out += ` COMMENT ${quoteString(c.comment)}`;
  if (c.codec) out += ` CODEC(${c.codec.map((x) => p.expr(x, PREC.lambda, ONE_LINE)).join(', ')})`;
  if (c.ttl) out += ` TTL ${p.expr(c.ttl, PREC.lambda, ONE_LINE)}`;
  return out;
}

/**
 * CREATE STREAM as a plain engine table (no write-ahead log, no `_tp_*` columns added):
 * `CREATE TABLE [IF NOT EXISTS] db.name (...) ENGINE = MergeTree ORDER BY ...`. Stream settings
 * (mode, event_time_column, logstore_*, ...) are Tributary's, not the engine's, and are dropped.
 */
export function translateCreateStreamAsTable(
  s: CreateStream,
  options: { engine?: string; database?: string } = {},
): string {
  const p = new ClickHousePrinter({ resolver: NO_TABLES });
  const x = (e: Expr) => p.expr(e, PREC.lambda, ONE_LINE);
  const db = s.target.database ?? options.database;
  const name =
    db !== undefined
      ? `${quoteIdentifier(db)}.${quoteIdentifier(s.target.name)}`
      : quoteIdentifier(s.target.name);
  const entries = [
    ...s.columns.map((c) => translateColumnDef(c)),
    ...s.indexes.map(
      (i) =>
        `INDEX ${quoteIdentifier(i.name)} ${x(i.expr)} TYPE ${x(i.type)}${i.granularity ? ` GRANULARITY ${x(i.granularity)}` : ''}`,
    ),
  ];
  let out = `CREATE TABLE ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${name} (${entries.join(', ')}) ENGINE = ${options.engine ?? 'MergeTree'}`;
  const primaryKey = s.primaryKey ?? s.columnsPrimaryKey;
  out += ` ORDER BY ${s.orderBy ? x(s.orderBy) : primaryKey ? x(primaryKey) : 'tuple()'}`;
  if (s.partitionBy) out += ` PARTITION BY ${x(s.partitionBy)}`;
  if (primaryKey) out += ` PRIMARY KEY ${x(primaryKey)}`;
  if (s.ttl?.length) {
    out += ` TTL ${s.ttl.map((t) => `${x(t.expr)}${t.action ? ` ${t.action}` : ''}${t.target !== undefined ? ` ${quoteString(t.target)}` : ''}`).join(', ')}`;
  }
  if (s.comment !== undefined) out += ` COMMENT ${quoteString(s.comment)}`;
  return out;
}

function translateStatement(s: Statement, p: ClickHousePrinter, options: TranslateOptions): string {
  switch (s.kind) {
    case 'Select':
    case 'Union':
      return p.translateQuery(s);
    case 'Insert':
      return translateInsert(s, p, options);
    case 'Describe': {
      if (s.query) return `DESCRIBE (${p.translateQuery(s.query)})`;
      if (s.tableFunction) {
        const f = s.tableFunction;
        if (f.kind !== 'Function')
          throw err('BAD_ARGUMENTS', { detail: 'DESCRIBE needs a stream, a table function or a query' });
        return `DESCRIBE (SELECT * FROM ${p.fromItem({ kind: 'TableFunction', name: f.name, args: f.args, span: f.span }, ONE_LINE)})`;
      }
      const t = s.target;
      if (!t) throw err('BAD_ARGUMENTS', { detail: 'DESCRIBE needs a stream, a table function or a query' });
      return `DESCRIBE (SELECT * FROM ${p.fromItem({ kind: 'Table', ...(t.database !== undefined ? { database: t.database } : {}), name: t.name, span: s.span }, ONE_LINE)})`;
    }
    case 'Explain':
      return `EXPLAIN${s.explainKind ? ` ${s.explainKind}` : ''}${s.options.length ? ` ${p.settings(s.options, ONE_LINE)}` : ''} ${translateStatement(s.statement, p, options)}`;
    case 'Set': {
      const settings = s.settings.filter((x) => !isProtonQuerySetting(x.name));
      if (!settings.length)
        throw err('NOT_IMPLEMENTED', {
          detail: 'SET of streaming-only settings has no engine form; pass them with the query',
        });
      return `SET ${p.settings(settings, ONE_LINE)}`;
    }
    case 'Use':
      return `USE ${quoteIdentifier(s.database)}`;
    case 'CreateDatabase':
      return `CREATE DATABASE ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${quoteIdentifier(s.name)}${s.engine ? ` ENGINE = ${p.expr(s.engine, PREC.lambda, ONE_LINE)}` : ''}${s.comment !== undefined ? ` COMMENT ${quoteString(s.comment)}` : ''}`;
    case 'Drop':
      if (s.object === 'DATABASE')
        return `DROP DATABASE ${s.ifExists ? 'IF EXISTS ' : ''}${quoteIdentifier(s.target.name)}`;
      break;
    case 'KillQuery':
      return `KILL QUERY WHERE ${p.expr(s.where, PREC.lambda, ONE_LINE)}${s.mode ? ` ${s.mode}` : ''}`;
    default:
      break;
  }
  throw err('NOT_IMPLEMENTED', {
    detail: `${describeKind(s)} is carried out by Tributary itself, not translated to engine SQL`,
  });
}

function describeKind(s: Statement): string {
  switch (s.kind) {
    case 'Drop':
      return `DROP ${s.object}`;
    case 'CreateStream':
      return `CREATE ${s.variant === 'STREAM' ? '' : `${s.variant} `}STREAM`;
    default:
      return s.kind.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
  }
}

function translateInsert(s: InsertStatement, p: ClickHousePrinter, options: TranslateOptions): string {
  let target: string;
  if (s.tableFunction) {
    const f = s.tableFunction;
    if (f.kind !== 'Function')
      throw err('BAD_ARGUMENTS', { detail: 'INSERT INTO FUNCTION needs a table function call' });
    target = `FUNCTION ${p.tableFunctionSql(f.name, f.args, ONE_LINE, f.span)}`;
  } else {
    const t = s.target;
    if (!t) throw err('BAD_ARGUMENTS', { detail: 'INSERT needs a target' });
    const r = options.resolver.resolve(t.database, t.name);
    if (!r)
      throw err('UNKNOWN_STREAM', { name: t.database !== undefined ? `${t.database}.${t.name}` : t.name });
    const into = r.insertSql ?? (r.engineSql.startsWith('(') || r.kind === 'view' ? undefined : r.engineSql);
    if (!into)
      throw err('NOT_IMPLEMENTED', {
        detail: `Cannot insert into ${t.name}: it is a ${r.kind.replace('_', ' ')}`,
      });
    target = into;
  }
  let out = `INSERT INTO ${target}`;
  if (s.columns) out += ` (${p.list(s.columns, ONE_LINE)})`;
  const settings = s.settings?.filter((x) => !isProtonQuerySetting(x.name));
  if (settings?.length) out += ` SETTINGS ${p.settings(settings, ONE_LINE)}`;
  if (s.values) return `${out} VALUES ${s.values.map((row) => `(${p.list(row, ONE_LINE)})`).join(', ')}`;
  if (s.query) return `${out} ${p.translateQuery(s.query)}`;
  if (s.format !== undefined) return `${out} FORMAT ${s.format}${s.data ? `\n${s.data}` : ''}`;
  return out;
}
