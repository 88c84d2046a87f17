import type { Expr } from '../ast/expression.ts';
import type {
  AlterCommand,
  ColumnDef,
  CreateDictionary,
  CreateFunction,
  CreateStream,
  DictionaryCall,
  IndexDef,
  QualifiedName,
  Statement,
  TtlItem,
} from '../ast/statement.ts';
import { PREC } from './print-expression.ts';
import { QueryPrinter } from './print-query.ts';
import { Layout, quoteIdentifier, quoteString } from './sql-text.ts';

/** Prints every statement. `print()` in format.ts is the entry point. */
export class StatementPrinter extends QueryPrinter {
  statement(s: Statement, layout: Layout): string {
    switch (s.kind) {
      case 'Select':
      case 'Union':
        return this.query(s, layout);
      case 'CreateStream':
        return this.createStream(s, layout);
      case 'CreateView': {
        let out = `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}${s.materialized ? 'MATERIALIZED ' : ''}VIEW ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.qname(s.target)}`;
        if (s.columns) out += ` ${this.columnBlock(s.columns, [], undefined, layout)}`;
        if (s.into) out += ` INTO ${this.qname(s.into)}`;
        out += ` AS${layout.br}${this.query(s.query, layout)}`;
        if (s.comment !== undefined) out += `${layout.br}COMMENT ${quoteString(s.comment)}`;
        return out;
      }
      case 'CreateExternalTable': {
        let out = `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}EXTERNAL TABLE ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.qname(s.target)}`;
        if (s.columns.length) out += ` ${this.columnBlock(s.columns, [], undefined, layout)}`;
        if (s.partitionBy) out += `${layout.br}PARTITION BY ${this.expr(s.partitionBy, PREC.lambda, layout)}`;
        if (s.settings) out += `${layout.br}SETTINGS ${this.settings(s.settings, layout)}`;
        if (s.comment !== undefined) out += `${layout.br}COMMENT ${quoteString(s.comment)}`;
        return out;
      }
      case 'CreateInput': {
        let out = `CREATE INPUT ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${quoteIdentifier(s.name)}${layout.br}SETTINGS ${this.settings(s.settings, layout)}`;
        if (s.comment !== undefined) out += `${layout.br}COMMENT ${quoteString(s.comment)}`;
        return out;
      }
      case 'CreateDictionary':
        return this.createDictionary(s, layout);
      case 'CreateFormatSchema':
        return `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}FORMAT SCHEMA ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${quoteIdentifier(s.name)} AS ${quoteString(s.body)} TYPE ${quoteIdentifier(s.schemaType)}`;
      case 'CreateFunction':
        return this.createFunction(s, layout);
      case 'CreateDatabase': {
        let out = `CREATE DATABASE ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${quoteIdentifier(s.name)}`;
        if (s.engine) out += ` ENGINE = ${this.expr(s.engine, PREC.lambda, layout)}`;
        if (s.comment !== undefined) out += ` COMMENT ${quoteString(s.comment)}`;
        return out;
      }
      case 'Drop': {
        let out = `DROP ${s.object} ${s.ifExists ? 'IF EXISTS ' : ''}${this.qname(s.target)}`;
        if (s.sync) out += ' SYNC';
        if (s.settings) out += ` SETTINGS ${this.settings(s.settings, layout)}`;
        return out;
      }
      case 'Alter': {
        let out = `ALTER ${s.object} ${this.qname(s.target)} ${s.commands.map((c) => this.alterCommand(c, layout)).join(', ')}`;
        if (s.settings) out += ` SETTINGS ${this.settings(s.settings, layout)}`;
        return out;
      }
      case 'Rename':
        return `RENAME ${s.object} ${s.ifExists ? 'IF EXISTS ' : ''}${s.pairs.map((p) => `${this.qname(p.from)} TO ${this.qname(p.to)}`).join(', ')}`;
      case 'Truncate':
        return `TRUNCATE ${s.object ? `${s.object} ` : ''}${s.ifExists ? 'IF EXISTS ' : ''}${this.qname(s.target)}`;
      case 'Insert':
        return this.insert(s, layout);
      case 'Show': {
        let out = `SHOW ${s.full ? 'FULL ' : ''}${s.what}`;
        if (s.from) out += ` FROM ${this.qname(s.from)}`;
        if (s.like !== undefined)
          out += ` ${s.notLike ? 'NOT LIKE' : s.ilike ? 'ILIKE' : 'LIKE'} ${quoteString(s.like)}`;
        if (s.where) out += ` WHERE ${this.expr(s.where, PREC.lambda, layout)}`;
        if (s.limit) out += ` LIMIT ${this.expr(s.limit, PREC.lambda, layout)}`;
        return out;
      }
      case 'ShowCreate':
        return `SHOW CREATE ${s.object ? `${s.object} ` : ''}${this.qname(s.target)}`;
      case 'Describe': {
        let out = 'DESCRIBE ';
        if (s.query) out += `(${layout.brOpen}${this.query(s.query, layout.inner)}${layout.brClose})`;
        else if (s.tableFunction) out += this.expr(s.tableFunction, PREC.lambda, layout);
        else if (s.target) out += this.qname(s.target);
        if (s.settings) out += ` SETTINGS ${this.settings(s.settings, layout)}`;
        return out;
      }
      case 'Explain': {
        let out = 'EXPLAIN';
        if (s.explainKind) out += ` ${s.explainKind}`;
        if (s.options.length) out += ` ${this.settings(s.options, layout)}`;
        return `${out}${layout.br}${this.statement(s.statement, layout)}`;
      }
      case 'KillQuery':
        return `KILL QUERY WHERE ${this.expr(s.where, PREC.lambda, layout)}${s.mode ? ` ${s.mode}` : ''}`;
      case 'Use':
        return `USE ${quoteIdentifier(s.database)}`;
      case 'Set':
        return `SET ${this.settings(s.settings, layout)}`;
      case 'Optimize': {
        let out = `OPTIMIZE STREAM ${this.qname(s.target)}`;
        if (s.partition) out += ` PARTITION ${this.expr(s.partition, PREC.lambda, layout)}`;
        if (s.final) out += ' FINAL';
        if (s.deduplicate) out += ' DEDUPLICATE';
        return out;
      }
      case 'System':
        return `SYSTEM ${s.words.join(' ')}${s.target ? ` ${this.qname(s.target)}` : ''}`;
      case 'Subscribe':
        return `SUBSCRIBE TO${layout.br}${this.query(s.query, layout)}`;
      case 'Recover':
        return `RECOVER FROM ${quoteString(s.queryId)}`;
      case 'Unsubscribe':
        return `UNSUBSCRIBE TO ${quoteString(s.queryId)}`;
    }
  }

  qname(n: QualifiedName): string {
    return n.database !== undefined
      ? `${quoteIdentifier(n.database)}.${quoteIdentifier(n.name)}`
      : quoteIdentifier(n.name);
  }

  columnDef(c: ColumnDef, layout: Layout = new Layout(false)): string {
    let out = quoteIdentifier(c.name);
    if (c.type) out += ` ${this.dataType(c.type)}`;
    if (c.nullable !== undefined) out += c.nullable ? ' NULL' : ' NOT NULL';
    if (c.default)
      out += ` ${c.default.kind}${c.default.expr ? ` ${this.expr(c.default.expr, PREC.lambda, layout)}` : ''}`;
    if (c.dictionary?.expression)
      out += ` EXPRESSION ${this.expr(c.dictionary.expression, PREC.lambda, layout)}`;
    if (c.dictionary?.hierarchical) out += ' HIERARCHICAL';
    if (c.dictionary?.injective) out += ' INJECTIVE';
    if (c.dictionary?.isObjectId) out += ' IS_OBJECT_ID';
    if (c.comment !== undefined) out += ` COMMENT ${quoteString(c.comment)}`;
    if (c.codec) out += ` CODEC(${this.list(c.codec, layout)})`;
    if (c.ttl) out += ` TTL ${this.expr(c.ttl, PREC.lambda, layout)}`;
    return out;
  }

  indexDef(i: IndexDef, layout: Layout): string {
    let out = `INDEX ${quoteIdentifier(i.name)} ${this.expr(i.expr, PREC.lambda, layout)} TYPE ${this.expr(i.type, PREC.lambda, layout)}`;
    if (i.granularity) out += ` GRANULARITY ${this.expr(i.granularity, PREC.lambda, layout)}`;
    return out;
  }

  /** `(col, ..., INDEX .., PRIMARY KEY ..)`, one entry per line when pretty. */
  protected columnBlock(
    columns: readonly ColumnDef[],
    indexes: readonly IndexDef[],
    primaryKey: Expr | undefined,
    layout: Layout,
  ): string {
    const inner = layout.inner;
    const entries = [
      ...columns.map((c) => this.columnDef(c, inner)),
      ...indexes.map((i) => this.indexDef(i, inner)),
      ...(primaryKey ? [`PRIMARY KEY ${this.expr(primaryKey, PREC.lambda, inner)}`] : []),
    ];
    if (!layout.pretty) return `(${entries.join(', ')})`;
    return `(${entries.map((e) => layout.brIn + e).join(',')}${layout.br})`;
  }

  protected ttl(items: readonly TtlItem[], layout: Layout): string {
    return items
      .map(
        (t) =>
          `${this.expr(t.expr, PREC.lambda, layout)}${t.action ? ` ${t.action}` : ''}${t.target !== undefined ? ` ${quoteString(t.target)}` : ''}`,
      )
      .join(', ');
  }

  protected createStream(s: CreateStream, layout: Layout): string {
    const variant = s.variant === 'STREAM' ? '' : `${s.variant} `;
    let out = `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}${variant}STREAM ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.qname(s.target)}`;
    if (s.columns.length || s.indexes.length || s.columnsPrimaryKey) {
      out += layout.pretty ? layout.br : ' ';
      out += this.columnBlock(s.columns, s.indexes, s.columnsPrimaryKey, layout);
    }
    const clause = (text: string) => {
      out += `${layout.br}${text}`;
    };
    if (s.engine) clause(`ENGINE = ${this.expr(s.engine, PREC.lambda, layout)}`);
    if (s.primaryKey) clause(`PRIMARY KEY ${this.expr(s.primaryKey, PREC.lambda, layout)}`);
    if (s.orderBy) clause(`ORDER BY ${this.expr(s.orderBy, PREC.lambda, layout)}`);
    if (s.partitionBy) clause(`PARTITION BY ${this.expr(s.partitionBy, PREC.lambda, layout)}`);
    if (s.ttl) clause(`TTL ${this.ttl(s.ttl, layout)}`);
    if (s.settings) clause(`SETTINGS ${this.settings(s.settings, layout)}`);
    if (s.comment !== undefined) clause(`COMMENT ${quoteString(s.comment)}`);
    if (s.asQuery) clause(`AS ${this.query(s.asQuery, layout)}`);
    return out;
  }

  protected dictionaryCall(c: DictionaryCall, layout: Layout): string {
    const args = c.args.map((a) => {
      if (a.value.kind !== 'DictionaryCall') return `${a.key} ${this.expr(a.value, PREC.unary, layout)}`;
      const call = this.dictionaryCall(a.value, layout);
      return a.key === a.value.name ? call : `${a.key} ${call}`;
    });
    return `${c.name}(${args.join(' ')})`;
  }

  protected createDictionary(s: CreateDictionary, layout: Layout): string {
    let out = `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}DICTIONARY ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.qname(s.target)}`;
    out += layout.pretty ? layout.br : ' ';
    out += this.columnBlock(s.columns, [], undefined, layout);
    if (s.primaryKey.length) out += `${layout.br}PRIMARY KEY ${this.list(s.primaryKey, layout)}`;
    if (s.source) out += `${layout.br}SOURCE(${this.dictionaryCall(s.source, layout)})`;
    if (s.layout) out += `${layout.br}LAYOUT(${this.dictionaryCall(s.layout, layout)})`;
    if (s.lifetime) {
      const { min, max } = s.lifetime;
      out += `${layout.br}LIFETIME(${min ? `MIN ${this.expr(min, PREC.lambda, layout)} MAX ${this.expr(max, PREC.lambda, layout)}` : this.expr(max, PREC.lambda, layout)})`;
    }
    if (s.range)
      out += `${layout.br}RANGE(MIN ${this.identifier(s.range.min)} MAX ${this.identifier(s.range.max)})`;
    if (s.settings) out += `${layout.br}SETTINGS(${this.settings(s.settings, layout)})`;
    if (s.comment !== undefined) out += `${layout.br}COMMENT ${quoteString(s.comment)}`;
    return out;
  }

  protected createFunction(s: CreateFunction, layout: Layout): string {
    const kind = s.variant === 'REMOTE' ? 'REMOTE ' : s.aggregate ? 'AGGREGATE ' : '';
    let out = `CREATE ${s.orReplace ? 'OR REPLACE ' : ''}${kind}FUNCTION ${s.ifNotExists ? 'IF NOT EXISTS ' : ''}${quoteIdentifier(s.name)}`;
    if (s.variant === 'SQL') return `${out} AS ${this.expr(s.lambda as Expr, PREC.lambda, layout)}`;
    out += `(${(s.params ?? []).map((p) => `${quoteIdentifier(p.name)} ${this.dataType(p.type)}`).join(', ')})`;
    if (s.returns) out += ` RETURNS ${this.dataType(s.returns)}`;
    if (s.variant === 'REMOTE') {
      out += ` URL ${quoteString(s.url ?? '')}`;
      if (s.authMethod !== undefined) out += ` AUTH_METHOD ${quoteString(s.authMethod)}`;
      if (s.authHeader !== undefined) out += ` AUTH_HEADER ${quoteString(s.authHeader)}`;
      if (s.authKey !== undefined) out += ` AUTH_KEY ${quoteString(s.authKey)}`;
      if (s.executionTimeout)
        out += ` EXECUTION_TIMEOUT ${this.expr(s.executionTimeout, PREC.unary, layout)}`;
      return out;
    }
    const body = s.body ?? '';
    const tag = body.includes('$$') ? '$js$' : '$$';
    return `${out} LANGUAGE ${s.language}${layout.br}AS ${tag}${body}${tag}`;
  }

  protected alterCommand(c: AlterCommand, layout: Layout): string {
    switch (c.kind) {
      case 'AddColumn':
        return `ADD COLUMN ${c.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.columnDef(c.column, layout)}${c.first ? ' FIRST' : ''}${c.after !== undefined ? ` AFTER ${quoteIdentifier(c.after)}` : ''}`;
      case 'DropColumn':
        return `DROP COLUMN ${c.ifExists ? 'IF EXISTS ' : ''}${quoteIdentifier(c.name)}`;
      case 'RenameColumn':
        return `RENAME COLUMN ${c.ifExists ? 'IF EXISTS ' : ''}${quoteIdentifier(c.from)} TO ${quoteIdentifier(c.to)}`;
      case 'ModifyColumn':
        return `MODIFY COLUMN ${c.ifExists ? 'IF EXISTS ' : ''}${this.columnDef(c.column, layout)}`;
      case 'CommentColumn':
        return `COMMENT COLUMN ${c.ifExists ? 'IF EXISTS ' : ''}${quoteIdentifier(c.name)} ${quoteString(c.comment)}`;
      case 'ModifySetting':
        return `MODIFY SETTING ${this.settings(c.settings, layout)}`;
      case 'ResetSetting':
        return `RESET SETTING ${c.names.map(quoteIdentifier).join(', ')}`;
      case 'ModifyTtl':
        return `MODIFY TTL ${this.ttl(c.ttl, layout)}`;
      case 'RemoveTtl':
        return 'REMOVE TTL';
      case 'ModifyComment':
        return `MODIFY COMMENT ${quoteString(c.comment)}`;
      case 'ModifyQuery':
        return `MODIFY QUERY ${this.query(c.query, layout)}`;
      case 'AddIndex':
        return `ADD INDEX ${c.ifNotExists ? 'IF NOT EXISTS ' : ''}${this.indexDef(c.index, layout).slice('INDEX '.length)}${c.after !== undefined ? ` AFTER ${quoteIdentifier(c.after)}` : ''}`;
      case 'DropIndex':
        return `DROP INDEX ${c.ifExists ? 'IF EXISTS ' : ''}${quoteIdentifier(c.name)}`;
      case 'Delete':
        return `DELETE WHERE ${this.expr(c.where, PREC.lambda, layout)}`;
      case 'Update':
        return `UPDATE ${c.assignments.map((a) => `${quoteIdentifier(a.column)} = ${this.expr(a.value, PREC.lambda, layout)}`).join(', ')} WHERE ${this.expr(c.where, PREC.lambda, layout)}`;
    }
  }

  protected insert(s: Statement & { kind: 'Insert' }, layout: Layout): string {
    let out = 'INSERT INTO ';
    out += s.tableFunction
      ? `FUNCTION ${this.expr(s.tableFunction, PREC.lambda, layout)}`
      : this.qname(s.target as QualifiedName);
    if (s.columns) out += ` (${this.list(s.columns, layout)})`;
    if (s.settings) out += ` SETTINGS ${this.settings(s.settings, layout)}`;
    if (s.values) return `${out} VALUES ${s.values.map((row) => `(${this.list(row, layout)})`).join(', ')}`;
    if (s.query) return `${out}${layout.br}${this.query(s.query, layout)}`;
    if (s.format !== undefined)
      return `${out} FORMAT ${quoteIdentifier(s.format)}${s.data ? `\n${s.data}` : ''}`;
    return out;
  }
}
