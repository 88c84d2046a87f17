import { actorOf } from '../../catalog/audit.ts';
import type { Engine } from '../../engine/engine.ts';
import { quoteIdent } from '../../engine/settings-clause.ts';
import { err } from '../../errors/tributary-error.ts';
import type { AlterStream, CreateDatabase, CreateStream, DropStatement } from '../../sql/ast/statement.ts';
import { printExpression } from '../../sql/printer/format.ts';
import type { StreamPatch, StreamStore } from '../../stream/stream-store.ts';
import type { StatementHandler } from '../statement-handler.ts';
import { statementPlan } from '../static-rows.ts';
import { settingValue, streamSpecFromAst } from './stream-spec-from-ast.ts';

export interface StreamStatementDeps {
  engine: Engine;
  streams: StreamStore;
  defaultDatabase: string;
}

/** CREATE STREAM [IF NOT EXISTS] ... */
export function createStreamHandler(deps: StreamStatementDeps): StatementHandler<CreateStream> {
  return async (s, ctx) => {
    const spec = streamSpecFromAst(s, deps.defaultDatabase);
    return statementPlan(ctx.sql, 'create', async () => {
      await deps.streams.create(spec, actorOf(ctx.options.user.username), { ifNotExists: s.ifNotExists });
    });
  };
}

/** DROP STREAM|TABLE [IF EXISTS] ... */
export function dropStreamHandler(deps: StreamStatementDeps): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      await deps.streams.drop(s.target.database ?? deps.defaultDatabase, s.target.name, {
        ifExists: s.ifExists,
      });
    });
}

/** CREATE DATABASE [IF NOT EXISTS] name */
export function createDatabaseHandler(deps: StreamStatementDeps): StatementHandler<CreateDatabase> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'create', async () => {
      if (s.name.startsWith('_tributary'))
        throw err('BAD_ARGUMENTS', { detail: `Database name ${s.name} is reserved` });
      const exists = (await deps.streams.databases()).some((d) => d.name === s.name);
      if (exists) {
        if (s.ifNotExists) return;
        throw err('DATABASE_ALREADY_EXISTS', { name: s.name });
      }
      await deps.engine.query(`CREATE DATABASE ${quoteIdent(s.name)}`);
    });
}

/** DROP DATABASE [IF EXISTS] name: its streams first, then the database. */
export function dropDatabaseHandler(deps: StreamStatementDeps): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      const name = s.target.name;
      if (name === 'default' || name === 'system' || name.startsWith('_tributary')) {
        throw err('BAD_ARGUMENTS', { detail: `Database ${name} cannot be dropped` });
      }
      const exists = (await deps.streams.databases()).some((d) => d.name === name);
      if (!exists) {
        if (s.ifExists) return;
        throw err('UNKNOWN_DATABASE', { name });
      }
      for (const r of deps.streams.list(name))
        await deps.streams.drop(name, r.value.name, { ifExists: true });
      await deps.engine.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
    });
}

const RETENTION_SETTINGS = new Set(['logstore_retention_bytes', 'logstore_retention_ms']);

/** ALTER STREAM ... MODIFY TTL | REMOVE TTL | MODIFY SETTING logstore_retention_* | MODIFY COMMENT */
export function alterStreamHandler(deps: StreamStatementDeps): StatementHandler<AlterStream> {
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    deps.streams.require(db, s.target.name);
    const patch: StreamPatch = {};
    for (const c of s.commands) {
      switch (c.kind) {
        case 'ModifyTtl':
          patch.ttl = c.ttl.map((t) => printExpression(t.expr)).join(', ');
          break;
        case 'RemoveTtl':
          patch.ttl = null;
          break;
        case 'ModifyComment':
          patch.description = c.comment;
          break;
        case 'ModifySetting':
          for (const setting of c.settings) {
            const name = setting.name.toLowerCase();
            if (!RETENTION_SETTINGS.has(name)) {
              throw err('BAD_ARGUMENTS', {
                detail: `Setting ${setting.name} cannot be modified; modifiable: ${[...RETENTION_SETTINGS].join(', ')}`,
              });
            }
            const value = Number(settingValue(setting));
            if (!Number.isInteger(value))
              throw err('BAD_ARGUMENTS', { detail: `${setting.name} must be an integer` });
            if (name === 'logstore_retention_bytes') patch.logstoreRetentionBytes = value;
            else patch.logstoreRetentionMs = value;
          }
          break;
        default:
          throw err('NOT_IMPLEMENTED', { detail: `ALTER STREAM ... ${c.kind} is not supported yet` });
      }
    }
    return statementPlan(ctx.sql, 'alter', async () => {
      await deps.streams.update(db, s.target.name, patch, actorOf(ctx.options.user.username));
    });
  };
}
