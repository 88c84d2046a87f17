import type { Engine } from '../../engine/engine.ts';
import { showNameFilter } from '../../sql/ast/build.ts';
import type { DescribeStatement, ShowCreateStatement, ShowStatement } from '../../sql/ast/statement.ts';
import { parseQuery } from '../../sql/parser/parse.ts';
import { printExpression } from '../../sql/printer/format.ts';
import { quoteIdentifier } from '../../sql/printer/sql-text.ts';
import type { TableResolver } from '../../sql/translator/resolver.ts';
import { translateQuery } from '../../sql/translator/translate.ts';
import type { StreamStore } from '../../stream/stream-store.ts';
import type { StatementHandler } from '../statement-handler.ts';
import { nameRows, StaticRows } from '../static-rows.ts';
import { describeEngineSql } from './select-statement.ts';

export interface ShowDeps {
  engine: Engine;
  streams: StreamStore;
  resolver: TableResolver;
  defaultDatabase: string;
}

/** SHOW STREAMS [FROM db] [LIKE ...], SHOW DATABASES. */
export function showStreamsHandler(deps: ShowDeps): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const db = s.from?.name ?? deps.defaultDatabase;
    const names = deps.streams
      .list(db)
      .map((r) => r.value.name)
      .filter(test)
      .sort();
    return nameRows(names, ctx.sql);
  };
}

export function showDatabasesHandler(deps: ShowDeps): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const names = (await deps.streams.databases()).map((d) => d.name).filter(test);
    return nameRows(names, ctx.sql);
  };
}

/** SHOW CREATE [STREAM] name: the Proton CREATE STREAM statement. */
export function showCreateStreamHandler(deps: ShowDeps): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const def = deps.streams.require(s.target.database ?? deps.defaultDatabase, s.target.name).value;
    return new StaticRows([{ name: 'statement', type: 'string' }], [[def.createQuery]], ctx.sql, 'show');
  };
}

const DESCRIBE_HEADER = [
  { name: 'name', type: 'string' },
  { name: 'type', type: 'string' },
  { name: 'default_type', type: 'string' },
  { name: 'default_expression', type: 'string' },
  { name: 'comment', type: 'string' },
  { name: 'codec_expression', type: 'string' },
  { name: 'ttl_expression', type: 'string' },
];

/** DESCRIBE stream | (query) | table_function(...): columns with Proton type names. */
export function describeHandler(deps: ShowDeps): StatementHandler<DescribeStatement> {
  return async (s, ctx) => {
    if (s.target) {
      const db = s.target.database ?? deps.defaultDatabase;
      const stream = deps.streams.get(db, s.target.name)?.value;
      if (stream) {
        const rows = stream.columns.map((c) => [
          c.name,
          c.type,
          c.alias ? 'ALIAS' : c.default ? 'DEFAULT' : '',
          c.alias?.proton ?? c.default?.proton ?? '',
          c.comment ?? '',
          c.codec ? `CODEC(${c.codec})` : '',
          c.ttl?.proton ?? '',
        ]);
        return new StaticRows(DESCRIBE_HEADER, rows, ctx.sql, 'describe');
      }
    }
    const from = s.target
      ? `${s.target.database ? `${quoteIdentifier(s.target.database)}.` : ''}${quoteIdentifier(s.target.name)}`
      : s.tableFunction
        ? printExpression(s.tableFunction)
        : undefined;
    const query = s.query ?? parseQuery(`SELECT * FROM ${from}`);
    const sql = translateQuery(query, { resolver: deps.resolver });
    const header = await describeEngineSql(deps.engine, sql);
    return new StaticRows(
      DESCRIBE_HEADER,
      header.map((h) => [h.name, h.type, '', '', '', '', '']),
      ctx.sql,
      'describe',
    );
  };
}
