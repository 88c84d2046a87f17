import { actorOf } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { settingsRecord } from '../queries/statements/stream-spec-from-ast.ts';
import { StaticRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import type {
  CreateExternalTable,
  DropStatement,
  ShowCreateStatement,
  ShowStatement,
} from '../sql/ast/statement.ts';
import { printExpression } from '../sql/printer/format.ts';
import { translateExpression, translateType } from '../sql/translator/translate.ts';
import { printDataType } from '../sql/types/data-type.ts';
import { type ExternalTableRecord, externalTableCreateQuery } from './external-table-definition.ts';
import type { ExternalTables } from './external-tables.ts';

export interface ExternalTableStatementDeps {
  tables: ExternalTables;
  defaultDatabase: string;
}

/** CREATE EXTERNAL TABLE as the record the catalog keeps; columns and PARTITION BY checked. */
export function externalTableRecord(s: CreateExternalTable, defaultDatabase: string): ExternalTableRecord {
  const columns = s.columns.map((c) => {
    if (!c.type) throw err('BAD_ARGUMENTS', { detail: `Column ${c.name} needs a type` });
    if (c.default)
      throw err('NOT_IMPLEMENTED', {
        detail: `Column ${c.name}: external table columns take no DEFAULT or ALIAS`,
      });
    let type = printDataType(c.type);
    if (c.nullable === true) type = `nullable(${type})`;
    translateType(type);
    return { name: c.name, type };
  });
  const partitionBy = s.partitionBy ? printExpression(s.partitionBy) : undefined;
  if (partitionBy !== undefined) translateExpression(partitionBy);
  const settings = settingsRecord(s.settings);
  const writeTo = settings.write_to;
  const placeholder = typeof writeTo === 'string' && writeTo.includes('{_partition_id}');
  if (partitionBy !== undefined && typeof writeTo === 'string' && !placeholder)
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table: s.target.name,
      setting: 'write_to',
      detail: 'must hold {_partition_id} when the table has PARTITION BY',
    });
  if (placeholder && partitionBy === undefined)
    throw err('EXTERNAL_TABLE_BAD_SETTING', {
      table: s.target.name,
      setting: 'write_to',
      detail: 'holds {_partition_id} but the table has no PARTITION BY',
    });
  return {
    db: s.target.database ?? defaultDatabase,
    name: s.target.name,
    columns,
    ...(partitionBy !== undefined ? { partition_by: partitionBy } : {}),
    settings,
    ...(s.comment !== undefined ? { comment: s.comment } : {}),
  };
}

/** CREATE [OR REPLACE] EXTERNAL TABLE [IF NOT EXISTS] ... SETTINGS type='s3', ... */
export function createExternalTableHandler(
  deps: ExternalTableStatementDeps,
): StatementHandler<CreateExternalTable> {
  return async (s, ctx) => {
    const record = externalTableRecord(s, deps.defaultDatabase);
    deps.tables.config(record);
    return statementPlan(ctx.sql, 'create', async () => {
      await deps.tables.create(record, actorOf(ctx.options.user.username), {
        ifNotExists: s.ifNotExists,
        orReplace: s.orReplace,
      });
    });
  };
}

/** DROP EXTERNAL TABLE [IF EXISTS] name: the record and its read table go; objects stay. */
export function dropExternalTableHandler(deps: ExternalTableStatementDeps): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      await deps.tables.drop(s.target.database ?? deps.defaultDatabase, s.target.name, {
        ifExists: s.ifExists,
      });
    });
}

/** DROP STREAM / DROP TABLE of an external table's name drop the external table (as in Proton). */
export function dropStreamOrExternalTable(
  deps: ExternalTableStatementDeps,
  next: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  const drop = dropExternalTableHandler(deps);
  return async (s, ctx) =>
    deps.tables.get(s.target.database ?? deps.defaultDatabase, s.target.name) ? drop(s, ctx) : next(s, ctx);
}

/** SHOW CREATE EXTERNAL TABLE name: the statement with secrets masked. */
export function showCreateExternalTableHandler(
  deps: ExternalTableStatementDeps,
): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const r = deps.tables.require(s.target.database ?? deps.defaultDatabase, s.target.name);
    return new StaticRows(
      [{ name: 'statement', type: 'string' }],
      [[externalTableCreateQuery(r.value)]],
      ctx.sql,
      'show',
    );
  };
}

/** SHOW CREATE [STREAM|TABLE] of an external table's name answers its CREATE EXTERNAL TABLE. */
export function showCreateStreamOrExternalTable(
  deps: ExternalTableStatementDeps,
  next: StatementHandler<ShowCreateStatement>,
): StatementHandler<ShowCreateStatement> {
  const show = showCreateExternalTableHandler(deps);
  return async (s, ctx) =>
    deps.tables.get(s.target.database ?? deps.defaultDatabase, s.target.name) ? show(s, ctx) : next(s, ctx);
}

/** SHOW EXTERNAL TABLES [FROM db] [LIKE '..']: one row per table, `name` and `type`. */
export function showExternalTablesHandler(deps: ExternalTableStatementDeps): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    if (s.where)
      throw err('NOT_IMPLEMENTED', { detail: 'SHOW EXTERNAL TABLES ... WHERE is not supported; use LIKE' });
    const test = showNameFilter(s);
    const rows = deps.tables
      .list(s.from?.name ?? deps.defaultDatabase)
      .filter((r) => test(r.value.name))
      .map((r) => [r.value.name, 's3']);
    return new StaticRows(
      [
        { name: 'name', type: 'string' },
        { name: 'type', type: 'string' },
      ],
      rows,
      ctx.sql,
      'show',
    );
  };
}
