import { actorOf } from '../catalog/audit.ts';
import type { PlannerDispatch } from '../cli/build-planner.ts';
import { err } from '../errors/tributary-error.ts';
import type { SqlQueryPlanner } from '../queries/sql-planner.ts';
import { StaticRows, statementPlan } from '../queries/static-rows.ts';
import { showNameFilter } from '../sql/ast/build.ts';
import { FormatSchemas } from './format-schemas.ts';

/**
 * CREATE [OR REPLACE] FORMAT SCHEMA [IF NOT EXISTS] n AS '...' TYPE Protobuf|Avro, DROP FORMAT
 * SCHEMA [IF EXISTS] n, SHOW FORMAT SCHEMAS [LIKE '..'] and SHOW CREATE FORMAT SCHEMA n.
 */
export function registerFormatSchemaStatements(deps: {
  planner: SqlQueryPlanner;
  dispatch: PlannerDispatch;
  schemas: FormatSchemas;
}): void {
  const { schemas } = deps;
  deps.planner.register('CreateFormatSchema', async (s, ctx) => {
    const record = { name: s.name, type: FormatSchemas.typeOf(s.schemaType), content: s.body };
    return statementPlan(ctx.sql, 'create', async () => {
      await schemas.create(record, actorOf(ctx.options.user.username), {
        orReplace: s.orReplace,
        ifNotExists: s.ifNotExists,
      });
    });
  });
  deps.dispatch.drop.register('FORMAT SCHEMA', async (s, ctx) =>
    statementPlan(ctx.sql, 'drop', async () => {
      await schemas.drop(s.target.name, { ifExists: s.ifExists });
    }),
  );
  deps.dispatch.show.register('FORMAT SCHEMAS', async (s, ctx) => {
    if (s.where)
      throw err('NOT_IMPLEMENTED', { detail: 'SHOW FORMAT SCHEMAS ... WHERE is not supported; use LIKE' });
    const test = showNameFilter(s);
    const rows = schemas
      .list()
      .filter((r) => test(r.value.name))
      .map((r) => [r.value.name, r.value.type]);
    return new StaticRows(
      [
        { name: 'name', type: 'string' },
        { name: 'type', type: 'string' },
      ],
      rows,
      ctx.sql,
      'show',
    );
  });
  deps.dispatch.showCreate.register('FORMAT SCHEMA', async (s, ctx) => {
    const r = schemas.get(s.target.name);
    if (!r) throw err('FORMAT_SCHEMA_NOT_FOUND', { name: s.target.name });
    // Proton's form: the body between $$ lines, without its first and last line breaks.
    const body = r.value.content.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
    return new StaticRows(
      [{ name: 'statement', type: 'string' }],
      [[`CREATE FORMAT SCHEMA ${r.value.name} AS\n$$\n${body}\n$$\nTYPE ${r.value.type}`]],
      ctx.sql,
      'show',
    );
  });
}
