import { actorOf } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { nameRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import type { CreateView, DropStatement, ShowStatement, SystemStatement } from '../sql/ast/statement.ts';
import type { MaterializedViews } from './materialized-views.ts';

export interface MaterializedViewStatementDeps {
  mvs: MaterializedViews;
  defaultDatabase: string;
}

/** CREATE MATERIALIZED VIEW [IF NOT EXISTS] [db.]mv [INTO target] AS SELECT ... [SETTINGS ...] */
export function createMaterializedViewHandler(
  deps: MaterializedViewStatementDeps,
): StatementHandler<CreateView> {
  return async (s, ctx) => {
    if (s.columns)
      throw err('NOT_IMPLEMENTED', {
        detail: 'a column list in CREATE MATERIALIZED VIEW is not supported; name the columns in the SELECT',
      });
    const text = ctx.sql.slice(s.query.span.start, s.query.span.end).trim();
    return statementPlan(ctx.sql, 'create', async () => {
      await deps.mvs.create(
        {
          db: s.target.database ?? deps.defaultDatabase,
          name: s.target.name,
          select: { query: s.query, text },
          ...(s.into ? { into: s.into } : {}),
          ...(s.comment !== undefined ? { description: s.comment } : {}),
          ifNotExists: s.ifNotExists,
          orReplace: s.orReplace,
        },
        actorOf(ctx.options.user.username),
      );
    });
  };
}

/** DROP VIEW (or DROP STREAM) of a materialized view. */
export function dropMaterializedViewHandler(
  deps: MaterializedViewStatementDeps,
): StatementHandler<DropStatement> {
  return async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      await deps.mvs.drop(s.target.database ?? deps.defaultDatabase, s.target.name, { ifExists: s.ifExists });
    });
}

/** SHOW MATERIALIZED VIEWS [FROM db] [[NOT] LIKE|ILIKE '...'] */
export function showMaterializedViewsHandler(
  deps: MaterializedViewStatementDeps,
): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const names = deps.mvs
      .list(s.from?.name ?? deps.defaultDatabase)
      .map((r) => r.value.name)
      .filter(test)
      .sort();
    return nameRows(names, ctx.sql);
  };
}

const PAUSE = new Set(['PAUSE']);
const RESUME = new Set(['RESUME', 'UNPAUSE']);

/** The view a SYSTEM statement names: its target, or the word after VIEW as written (case kept). */
function systemTarget(s: SystemStatement, sql: string): { database?: string; name: string } | undefined {
  if (s.target) return s.target;
  const text = sql.slice(s.span.start, s.span.end);
  const m = /\bVIEW\s+([A-Za-z_][A-Za-z0-9_]*)/i.exec(text);
  return m ? { name: m[1] as string } : undefined;
}

/**
 * SYSTEM PAUSE MATERIALIZED VIEW mv [SYNC] and SYSTEM RESUME (or UNPAUSE) MATERIALIZED VIEW mv
 * (Timeplus's spelling). Other SYSTEM commands go to `other` (or NOT_IMPLEMENTED).
 */
export function systemMaterializedViewHandler(
  deps: MaterializedViewStatementDeps,
  other?: StatementHandler<SystemStatement>,
): StatementHandler<SystemStatement> {
  return async (s, ctx) => {
    const [verb, w1, w2] = s.words;
    const isMv = w1 === 'MATERIALIZED' && w2 === 'VIEW';
    if (!isMv || !verb || (!PAUSE.has(verb) && !RESUME.has(verb))) {
      if (other) return other(s, ctx);
      throw err('NOT_IMPLEMENTED', { detail: `SYSTEM ${s.words.join(' ')} is not supported` });
    }
    const target = systemTarget(s, ctx.sql);
    if (!target) throw err('BAD_ARGUMENTS', { detail: `SYSTEM ${verb} MATERIALIZED VIEW needs a view name` });
    const db = target.database ?? deps.defaultDatabase;
    const actor = actorOf(ctx.options.user.username);
    return statementPlan(ctx.sql, 'system', async () => {
      if (PAUSE.has(verb)) await deps.mvs.pause(db, target.name, actor, { sync: true });
      else await deps.mvs.resume(db, target.name, actor, { sync: true });
    });
  };
}
