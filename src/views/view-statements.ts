import { actorOf } from '../catalog/audit.ts';
import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import { nameRows, StaticRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import type { CreateView, DropStatement, ShowCreateStatement, ShowStatement } from '../sql/ast/statement.ts';
import type { ViewStore } from './view-store.ts';

export interface ViewStatementDeps {
  views: ViewStore;
  defaultDatabase: string;
}

const NOT_MATERIALIZED = 'materialized views are not supported yet';

/**
 * CREATE [OR REPLACE] VIEW [IF NOT EXISTS] [db.]v AS SELECT ... [COMMENT '...']. A materialized
 * view goes to `materialized` when given (its owner registers it here), else NOT_IMPLEMENTED.
 */
export function createViewHandler(
  deps: ViewStatementDeps,
  materialized?: StatementHandler<CreateView>,
): StatementHandler<CreateView> {
  return async (s, ctx) => {
    if (s.materialized) {
      if (materialized) return materialized(s, ctx);
      throw err('NOT_IMPLEMENTED', { detail: NOT_MATERIALIZED });
    }
    if (s.into) throw err('BAD_ARGUMENTS', { detail: 'INTO is for materialized views only' });
    if (s.columns)
      throw err('NOT_IMPLEMENTED', {
        detail: 'a column list in CREATE VIEW is not supported; name the columns in the SELECT',
      });
    const text = ctx.sql.slice(s.query.span.start, s.query.span.end).trim();
    return statementPlan(ctx.sql, 'create', async () => {
      await deps.views.create(
        {
          db: s.target.database ?? deps.defaultDatabase,
          name: s.target.name,
          select: { query: s.query, text },
          ...(s.comment !== undefined ? { description: s.comment } : {}),
          ifNotExists: s.ifNotExists,
          orReplace: s.orReplace,
        },
        actorOf(ctx.options.user.username),
      );
    });
  };
}

/** DROP VIEW [IF EXISTS] [db.]v (a materialized view goes to `materialized` when given). */
export function dropViewHandler(
  deps: ViewStatementDeps,
  materialized?: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    if (materialized && deps.views.get(db, s.target.name)?.value.materialized) return materialized(s, ctx);
    return statementPlan(ctx.sql, 'drop', async () => {
      await deps.views.drop(db, s.target.name, { ifExists: s.ifExists });
    });
  };
}

/** DROP STREAM|TABLE of a name that is a view (and not a stream) drops the view, as in Proton. */
export function dropStreamOrViewHandler(
  deps: ViewStatementDeps,
  dropStream: StatementHandler<DropStatement>,
  materialized?: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  const dropView = dropViewHandler(deps);
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    const view = deps.views.get(db, s.target.name);
    if (view?.value.materialized && materialized) return materialized(s, ctx);
    return view && !view.value.materialized ? dropView(s, ctx) : dropStream(s, ctx);
  };
}

/** DROP DATABASE: the database's views go first (refused while views elsewhere read into it). */
export function dropDatabaseWithViewsHandler(
  deps: ViewStatementDeps,
  dropDatabase: StatementHandler<DropStatement>,
): StatementHandler<DropStatement> {
  return async (s, ctx) => {
    const plan = await dropDatabase(s, ctx);
    if (plan.kind !== 'statement') return plan;
    return {
      ...plan,
      run: async (signal: AbortSignal) => {
        const name = s.target.name;
        // The protected databases are refused by DROP DATABASE itself; leave their views alone.
        if (name !== deps.defaultDatabase && name !== 'system' && !name.startsWith('_tributary'))
          await deps.views.dropDatabase(name);
        await plan.run(signal);
      },
    };
  };
}

/** SHOW VIEWS [FROM db] [[NOT] LIKE|ILIKE '...']: the names of the (non-materialized) views. */
export function showViewsHandler(deps: ViewStatementDeps): StatementHandler<ShowStatement> {
  return async (s, ctx) => {
    const test = showNameFilter(s);
    const names = deps.views
      .list(s.from?.name ?? deps.defaultDatabase)
      .filter((r) => !r.value.materialized)
      .map((r) => r.value.name)
      .filter(test)
      .sort();
    return nameRows(names, ctx.sql);
  };
}

/** SHOW CREATE VIEW [db.]v: the view's CREATE statement. */
export function showCreateViewHandler(deps: ViewStatementDeps): StatementHandler<ShowCreateStatement> {
  return async (s, ctx) => {
    const record = deps.views.require(s.target.database ?? deps.defaultDatabase, s.target.name);
    return new StaticRows(
      [{ name: 'statement', type: 'string' }],
      [[deps.views.createQuery(record.value)]],
      ctx.sql,
      'show',
    );
  };
}

/** SHOW CREATE [STREAM] name of a name that is a view (and not a stream) shows the view. */
export function showCreateStreamOrViewHandler(
  deps: ViewStatementDeps,
  showStream: StatementHandler<ShowCreateStatement>,
): StatementHandler<ShowCreateStatement> {
  const showView = showCreateViewHandler(deps);
  return async (s, ctx) => {
    const db = s.target.database ?? deps.defaultDatabase;
    return deps.views.get(db, s.target.name) && !deps.views.hasStream(db, s.target.name)
      ? showView(s, ctx)
      : showStream(s, ctx);
  };
}
