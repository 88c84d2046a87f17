import { actorOf } from '../../catalog/audit.ts';
import type { Engine } from '../../engine/engine.ts';
import { quoteIdent } from '../../engine/settings-clause.ts';
import { err } from '../../errors/tributary-error.ts';
import type {
  AlterStream,
  CreateDatabase,
  CreateStream,
  DropStatement,
  OptimizeStatement,
  RenameStatement,
} from '../../sql/ast/statement.ts';
import { printExpression } from '../../sql/printer/format.ts';
import { translateExpression } from '../../sql/translator/translate.ts';
import type { ColumnAlteration } from '../../stream/alter-columns.ts';
import type { StreamPatch, StreamStore } from '../../stream/stream-store.ts';
import type { StatementHandler } from '../statement-handler.ts';
import { statementPlan } from '../static-rows.ts';
import {
  columnChangeSpec,
  columnSpecFromAst,
  settingValue,
  streamSpecFromAst,
} from './stream-spec-from-ast.ts';

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

/**
 * OPTIMIZE [STREAM|TABLE] [db.]name [PARTITION p] [FINAL]: the stream's front moved into its
 * MergeTree and the MergeTree's parts merged (StreamStore.optimize). DEDUPLICATE is refused: it
 * would delete rows whose sequence numbers the WAL still holds, and a restart would replay them.
 */
export function optimizeStreamHandler(deps: StreamStatementDeps): StatementHandler<OptimizeStatement> {
  return async (s, ctx) => {
    if (s.deduplicate)
      throw err('NOT_IMPLEMENTED', {
        detail:
          'OPTIMIZE ... DEDUPLICATE is not supported: a stream keeps every row it acknowledged (its sequence numbers are in the WAL); deduplicate in the query (SELECT DISTINCT, LIMIT 1 BY) or with a versioned_kv stream',
      });
    const db = s.target.database ?? deps.defaultDatabase;
    deps.streams.require(db, s.target.name);
    const partition = s.partition ? translateExpression(s.partition) : undefined;
    return statementPlan(ctx.sql, 'optimize', async () => {
      await deps.streams.optimize(db, s.target.name, {
        final: s.final,
        ...(partition !== undefined ? { partition } : {}),
      });
    });
  };
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

/**
 * ALTER STREAM ... ADD COLUMN | DROP COLUMN | MODIFY COLUMN | RENAME COLUMN | COMMENT COLUMN |
 * MODIFY TTL | REMOVE TTL | MODIFY SETTING logstore_retention_* | MODIFY COMMENT. Column commands
 * run first, in order, then the rest.
 */
export function alterStreamHandler(deps: StreamStatementDeps): StatementHandler<AlterStream> {
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    deps.streams.require(db, s.target.name);
    const patch: StreamPatch = {};
    const columns: ColumnAlteration[] = [];
    for (const c of s.commands) {
      switch (c.kind) {
        case 'AddColumn':
          columns.push({
            kind: 'add',
            column: columnSpecFromAst(c.column),
            ifNotExists: c.ifNotExists,
            ...(c.first ? { first: true } : {}),
            ...(c.after !== undefined ? { after: c.after } : {}),
          });
          break;
        case 'DropColumn':
          columns.push({ kind: 'drop', name: c.name, ifExists: c.ifExists });
          break;
        case 'ModifyColumn':
          columns.push({ kind: 'modify', column: columnChangeSpec(c.column), ifExists: c.ifExists });
          break;
        case 'RenameColumn':
          columns.push({ kind: 'rename', from: c.from, to: c.to, ifExists: c.ifExists });
          break;
        case 'CommentColumn':
          columns.push({ kind: 'comment', name: c.name, comment: c.comment, ifExists: c.ifExists });
          break;
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
      const actor = actorOf(ctx.options.user.username);
      if (columns.length > 0) await deps.streams.alterColumns(db, s.target.name, columns, actor);
      if (columns.length === 0 || Object.keys(patch).length > 0)
        await deps.streams.update(db, s.target.name, patch, actor);
    });
  };
}

export interface RenameStreamDeps extends StreamStatementDeps {
  /** Other resources that use stream `db.name` (e.g. `input x`): a stream with any is not renamed. */
  dependents?: (db: string, name: string) => string[];
}

/** RENAME STREAM|TABLE [IF EXISTS] [db.]a TO [db.]b [, ...] (pairs in order). */
export function renameStreamHandler(deps: RenameStreamDeps): StatementHandler<RenameStatement> {
  return async (s, ctx) => {
    const pairs = s.pairs.map((p) => ({
      fromDb: p.from.database ?? deps.defaultDatabase,
      from: p.from.name,
      toDb: p.to.database ?? deps.defaultDatabase,
      to: p.to.name,
    }));
    return statementPlan(ctx.sql, 'rename', async () => {
      for (const p of pairs) {
        // What depends on the name is refused first, as in Proton (also for a view of that name).
        const dependents = deps.dependents?.(p.fromDb, p.from) ?? [];
        if (dependents.length > 0)
          throw err('HAVE_DEPENDENT_OBJECTS', {
            name: `${p.fromDb}.${p.from}`,
            dependents: dependents.join(', '),
          });
        if (!deps.streams.get(p.fromDb, p.from)) {
          if (s.ifExists) continue;
          deps.streams.require(p.fromDb, p.from);
        }
        await deps.streams.rename(p.fromDb, p.from, p.toDb, p.to, actorOf(ctx.options.user.username));
      }
    });
  };
}
