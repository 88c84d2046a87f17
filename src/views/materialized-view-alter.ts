import { err } from '../errors/tributary-error.ts';
import type { StatementHandler } from '../queries/statement-handler.ts';
import type { AlterStream } from '../sql/ast/statement.ts';
import type { MaterializedViewRecord, MaterializedViews } from './materialized-views.ts';

/**
 * `ALTER STREAM <materialized view> ...` as Proton checks it (StorageMaterializedView): a view
 * writing INTO a stream of its own cannot be altered (48; a REMOVE TTL is refused before that,
 * 36, as the view itself has no TTL); a view with an implicit target takes setting and TTL
 * changes only, which go to its target stream (it has the view's name), and refuses the rest (48).
 */
export function guardMaterializedViewAlter(
  mvs: () => MaterializedViews | undefined,
  defaultDatabase: string,
  alter: StatementHandler<AlterStream>,
): StatementHandler<AlterStream> {
  return async (s, ctx) => {
    const view = mvs()?.get(s.target.database ?? defaultDatabase, s.target.name)?.value as
      | MaterializedViewRecord
      | undefined;
    if (view && !view.implicit_target) {
      if (s.commands.some((c) => c.kind === 'RemoveTtl'))
        throw err('BAD_ARGUMENTS', {
          detail: `Materialized view ${s.target.name} doesn't have any TTL expression, cannot remove`,
        });
      throw err('NOT_IMPLEMENTED', {
        detail: `Materialized view ${s.target.name} with a specified target stream can't be altered; alter ${view.target_stream}`,
      });
    }
    if (view && !s.commands.every((c) => ['ModifySetting', 'ModifyTtl', 'RemoveTtl'].includes(c.kind)))
      throw err('NOT_IMPLEMENTED', { detail: "Only a materialized view's settings and TTL can be altered" });
    return alter(s, ctx);
  };
}
